/*
 * librpma.h -- the public API of librpma 1.3, as implemented by rpma-sim.
 *
 * Same prototypes, constants, enum values and error codes as librpma 1.3 (and Debian's
 * librpma-dev), so a program written for librpma compiles against this header unchanged.
 * The behaviour of every function is described in librpma(7) and the man page of each
 * function; where the simulator differs, docs/differences.md says so, and
 * docs/librpma-compatibility.md lists every function's error conditions.
 */
#ifndef LIBRPMA_H
#define LIBRPMA_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RPMA_W_WAIT_FOR_COMPLETION (1)

/* error codes */
#define RPMA_E_UNKNOWN (-100000)         /* Unknown error */
#define RPMA_E_NOSUPP (-100001)          /* Not supported */
#define RPMA_E_PROVIDER (-100002)        /* Provider error occurred */
#define RPMA_E_NOMEM (-100003)           /* Out of memory */
#define RPMA_E_INVAL (-100004)           /* Invalid argument */
#define RPMA_E_NO_COMPLETION (-100005)   /* No next completion available */
#define RPMA_E_NO_EVENT (-100006)        /* No next event available */
#define RPMA_E_AGAIN (-100007)           /* Temporary error */
#define RPMA_E_SHARED_CHANNEL (-100008)  /* Completion channel is shared */
#define RPMA_E_NOT_SHARED_CHNL (-100009) /* Completion channel isn't shared */

/* picking up an RDMA-capable device */

#define RPMA_DEFAULT_TIMEOUT_MS 1000

enum rpma_util_ibv_context_type {
  RPMA_UTIL_IBV_CONTEXT_LOCAL, /* lookup for a local device */
  RPMA_UTIL_IBV_CONTEXT_REMOTE /* lookup for a remote device */
};

int rpma_utils_get_ibv_context(const char* addr, enum rpma_util_ibv_context_type type,
                               struct ibv_context** ibv_ctx_ptr);

int rpma_utils_ibv_context_is_odp_capable(struct ibv_context* ibv_ctx, int* is_odp_capable);

/* peer configuration */

struct rpma_peer_cfg;

int rpma_peer_cfg_new(struct rpma_peer_cfg** pcfg_ptr);
int rpma_peer_cfg_delete(struct rpma_peer_cfg** pcfg_ptr);
int rpma_peer_cfg_set_direct_write_to_pmem(struct rpma_peer_cfg* pcfg, bool supported);
int rpma_peer_cfg_get_direct_write_to_pmem(const struct rpma_peer_cfg* pcfg, bool* supported);
int rpma_peer_cfg_get_descriptor(const struct rpma_peer_cfg* pcfg, void* desc);
int rpma_peer_cfg_get_descriptor_size(const struct rpma_peer_cfg* pcfg, size_t* desc_size);
int rpma_peer_cfg_from_descriptor(const void* desc, size_t desc_size,
                                  struct rpma_peer_cfg** pcfg_ptr);

/* peer */

struct rpma_peer;

int rpma_peer_new(struct ibv_context* ibv_ctx, struct rpma_peer** peer_ptr);
int rpma_peer_delete(struct rpma_peer** peer_ptr);

/* memory-related structures */

struct rpma_mr_local;
struct rpma_mr_remote;

#define RPMA_MR_USAGE_READ_SRC (1 << 0)
#define RPMA_MR_USAGE_READ_DST (1 << 1)
#define RPMA_MR_USAGE_WRITE_SRC (1 << 2)
#define RPMA_MR_USAGE_WRITE_DST (1 << 3)
#define RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY (1 << 4)
#define RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT (1 << 5)
#define RPMA_MR_USAGE_SEND (1 << 6)
#define RPMA_MR_USAGE_RECV (1 << 7)

int rpma_mr_reg(struct rpma_peer* peer, void* ptr, size_t size, int usage,
                struct rpma_mr_local** mr_ptr);
int rpma_mr_dereg(struct rpma_mr_local** mr_ptr);
int rpma_mr_get_descriptor(const struct rpma_mr_local* mr, void* desc);
int rpma_mr_remote_from_descriptor(const void* desc, size_t desc_size,
                                   struct rpma_mr_remote** mr_ptr);
int rpma_mr_get_descriptor_size(const struct rpma_mr_local* mr, size_t* desc_size);
int rpma_mr_get_ptr(const struct rpma_mr_local* mr, void** ptr);
int rpma_mr_get_size(const struct rpma_mr_local* mr, size_t* size);
int rpma_mr_remote_get_size(const struct rpma_mr_remote* mr, size_t* size);
int rpma_mr_remote_get_flush_type(const struct rpma_mr_remote* mr, int* flush_type);
int rpma_mr_remote_delete(struct rpma_mr_remote** mr_ptr);
int rpma_mr_advise(struct rpma_mr_local* mr, size_t offset, size_t len, int advice, uint32_t flags);

/* connection configuration */

struct rpma_conn_cfg;

int rpma_conn_cfg_new(struct rpma_conn_cfg** cfg_ptr);
int rpma_conn_cfg_delete(struct rpma_conn_cfg** cfg_ptr);
int rpma_conn_cfg_set_timeout(struct rpma_conn_cfg* cfg, int timeout_ms);
int rpma_conn_cfg_get_timeout(const struct rpma_conn_cfg* cfg, int* timeout_ms);
int rpma_conn_cfg_set_cq_size(struct rpma_conn_cfg* cfg, uint32_t cq_size);
int rpma_conn_cfg_get_compl_channel(const struct rpma_conn_cfg* cfg, bool* shared);
int rpma_conn_cfg_set_compl_channel(struct rpma_conn_cfg* cfg, bool shared);
int rpma_conn_cfg_get_cq_size(const struct rpma_conn_cfg* cfg, uint32_t* cq_size);
int rpma_conn_cfg_set_rcq_size(struct rpma_conn_cfg* cfg, uint32_t rcq_size);
int rpma_conn_cfg_get_rcq_size(const struct rpma_conn_cfg* cfg, uint32_t* rcq_size);
int rpma_conn_cfg_set_sq_size(struct rpma_conn_cfg* cfg, uint32_t sq_size);
int rpma_conn_cfg_get_sq_size(const struct rpma_conn_cfg* cfg, uint32_t* sq_size);
int rpma_conn_cfg_set_rq_size(struct rpma_conn_cfg* cfg, uint32_t rq_size);
int rpma_conn_cfg_get_rq_size(const struct rpma_conn_cfg* cfg, uint32_t* rq_size);

/* shared RQ */

struct rpma_srq;

int rpma_conn_cfg_set_srq(struct rpma_conn_cfg* cfg, struct rpma_srq* srq);
int rpma_conn_cfg_get_srq(const struct rpma_conn_cfg* cfg, struct rpma_srq** srq_ptr);

/* connection */

struct rpma_conn;

int rpma_conn_get_event_fd(const struct rpma_conn* conn, int* fd);

enum rpma_conn_event {
  RPMA_CONN_UNDEFINED = -1, /* Undefined connection event */
  RPMA_CONN_ESTABLISHED,    /* Connection established */
  RPMA_CONN_CLOSED,         /* Connection closed */
  RPMA_CONN_LOST,           /* Connection lost */
  RPMA_CONN_REJECTED,       /* Connection rejected */
  RPMA_CONN_UNREACHABLE     /* Connection unreachable */
};

int rpma_conn_next_event(struct rpma_conn* conn, enum rpma_conn_event* event);
const char* rpma_utils_conn_event_2str(enum rpma_conn_event conn_event);

struct rpma_conn_private_data {
  void* ptr;
  uint8_t len;
};

int rpma_conn_get_private_data(const struct rpma_conn* conn, struct rpma_conn_private_data* pdata);
int rpma_conn_apply_remote_peer_cfg(struct rpma_conn* conn, const struct rpma_peer_cfg* pcfg);
int rpma_conn_get_qp_num(const struct rpma_conn* conn, uint32_t* qp_num);

struct rpma_cq;

int rpma_conn_get_cq(const struct rpma_conn* conn, struct rpma_cq** cq_ptr);
int rpma_conn_get_rcq(const struct rpma_conn* conn, struct rpma_cq** rcq_ptr);
int rpma_conn_disconnect(struct rpma_conn* conn);
int rpma_conn_delete(struct rpma_conn** conn_ptr);

/* incoming / outgoing connection request */

struct rpma_conn_req;

int rpma_conn_req_new(struct rpma_peer* peer, const char* addr, const char* port,
                      const struct rpma_conn_cfg* cfg, struct rpma_conn_req** req_ptr);
int rpma_conn_req_delete(struct rpma_conn_req** req_ptr);
int rpma_conn_req_connect(struct rpma_conn_req** req_ptr,
                          const struct rpma_conn_private_data* pdata, struct rpma_conn** conn_ptr);
int rpma_conn_get_compl_fd(const struct rpma_conn* conn, int* fd);
int rpma_conn_wait(struct rpma_conn* conn, int flags, struct rpma_cq** cq, bool* is_rcq);
int rpma_conn_req_recv(struct rpma_conn_req* req, struct rpma_mr_local* dst, size_t offset,
                       size_t len, const void* op_context);

/* server-side setup */

struct rpma_ep;

int rpma_ep_listen(struct rpma_peer* peer, const char* addr, const char* port,
                   struct rpma_ep** ep_ptr);
int rpma_ep_shutdown(struct rpma_ep** ep_ptr);
int rpma_ep_get_fd(const struct rpma_ep* ep, int* fd);
int rpma_ep_next_conn_req(struct rpma_ep* ep, const struct rpma_conn_cfg* cfg,
                          struct rpma_conn_req** req_ptr);
int rpma_conn_req_get_private_data(const struct rpma_conn_req* req,
                                   struct rpma_conn_private_data* pdata);

/* shared RQ configuration */

struct rpma_srq_cfg;

int rpma_srq_cfg_new(struct rpma_srq_cfg** cfg_ptr);
int rpma_srq_cfg_delete(struct rpma_srq_cfg** cfg_ptr);
int rpma_srq_cfg_set_rq_size(struct rpma_srq_cfg* cfg, uint32_t rq_size);
int rpma_srq_cfg_get_rq_size(const struct rpma_srq_cfg* cfg, uint32_t* rq_size);
int rpma_srq_cfg_set_rcq_size(struct rpma_srq_cfg* cfg, uint32_t rcq_size);
int rpma_srq_cfg_get_rcq_size(const struct rpma_srq_cfg* cfg, uint32_t* rcq_size);

/* shared RQ */

int rpma_srq_new(struct rpma_peer* peer, struct rpma_srq_cfg* cfg, struct rpma_srq** srq_ptr);
int rpma_srq_delete(struct rpma_srq** srq_ptr);
int rpma_srq_recv(struct rpma_srq* srq, struct rpma_mr_local* dst, size_t offset, size_t len,
                  const void* op_context);
int rpma_srq_get_rcq(const struct rpma_srq* srq, struct rpma_cq** rcq_ptr);

/* remote memory access functions */

/* generate operation completion on error */
#define RPMA_F_COMPLETION_ON_ERROR (1 << 0)

/* generate operation completion regardless of its result */
#define RPMA_F_COMPLETION_ALWAYS (1 << 1 | RPMA_F_COMPLETION_ON_ERROR)

int rpma_read(struct rpma_conn* conn, struct rpma_mr_local* dst, size_t dst_offset,
              const struct rpma_mr_remote* src, size_t src_offset, size_t len, int flags,
              const void* op_context);
int rpma_write(struct rpma_conn* conn, struct rpma_mr_remote* dst, size_t dst_offset,
               const struct rpma_mr_local* src, size_t src_offset, size_t len, int flags,
               const void* op_context);
int rpma_write_with_imm(struct rpma_conn* conn, struct rpma_mr_remote* dst, size_t dst_offset,
                        const struct rpma_mr_local* src, size_t src_offset, size_t len, int flags,
                        uint32_t imm, const void* op_context);

#define RPMA_ATOMIC_WRITE_ALIGNMENT 8

int rpma_atomic_write(struct rpma_conn* conn, struct rpma_mr_remote* dst, size_t dst_offset,
                      const char src[8], int flags, const void* op_context);

enum rpma_flush_type {
  /* flush data down to the persistent domain */
  RPMA_FLUSH_TYPE_PERSISTENT,
  /* flush data deep enough to make it visible on the remote node */
  RPMA_FLUSH_TYPE_VISIBILITY,
};

int rpma_flush(struct rpma_conn* conn, struct rpma_mr_remote* dst, size_t dst_offset, size_t len,
               enum rpma_flush_type type, int flags, const void* op_context);

int rpma_send(struct rpma_conn* conn, const struct rpma_mr_local* src, size_t offset, size_t len,
              int flags, const void* op_context);
int rpma_send_with_imm(struct rpma_conn* conn, const struct rpma_mr_local* src, size_t offset,
                       size_t len, int flags, uint32_t imm, const void* op_context);
int rpma_recv(struct rpma_conn* conn, struct rpma_mr_local* dst, size_t offset, size_t len,
              const void* op_context);

/* completion handling */

int rpma_cq_get_fd(const struct rpma_cq* cq, int* fd);
int rpma_cq_wait(struct rpma_cq* cq);
int rpma_cq_get_wc(struct rpma_cq* cq, int num_entries, struct ibv_wc* wc, int* num_entries_got);

/* error handling */

const char* rpma_err_2str(int ret);

/* librpma logging mechanism control */

enum rpma_log_level {
  RPMA_LOG_DISABLED = -1, /* all messages will be suppressed */
  RPMA_LOG_LEVEL_FATAL,   /* stops the library immediately */
  RPMA_LOG_LEVEL_ERROR,   /* stops the library working properly */
  RPMA_LOG_LEVEL_WARNING, /* could be handled in the upper level */
  RPMA_LOG_LEVEL_NOTICE,  /* non-massive info, e.g. connection established */
  RPMA_LOG_LEVEL_INFO,    /* massive info, e.g. every write operation */
  RPMA_LOG_LEVEL_DEBUG,   /* debug info, e.g. write operation dump */
};

enum rpma_log_threshold {
  RPMA_LOG_THRESHOLD,     /* messages above it do not reach the logging function */
  RPMA_LOG_THRESHOLD_AUX, /* may be used by the logging function (default: stderr) */
  RPMA_LOG_THRESHOLD_MAX
};

int rpma_log_set_threshold(enum rpma_log_threshold threshold, enum rpma_log_level level);
int rpma_log_get_threshold(enum rpma_log_threshold threshold, enum rpma_log_level* level);

typedef void rpma_log_function(enum rpma_log_level level, const char* file_name, const int line_no,
                               const char* function_name, const char* message_format, ...);

#define RPMA_LOG_USE_DEFAULT_FUNCTION (NULL)

int rpma_log_set_function(rpma_log_function* log_function);

#ifdef __cplusplus
}
#endif

#endif /* LIBRPMA_H */
