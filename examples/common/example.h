/*
 * example.h -- the frame every example program shares.
 *
 * Each example folder provides example_server() and example_client(); common/main.c runs
 * them as two threads of one process ("both", the default), or as one side only ("server" or
 * "client", for running them as separate processes or on separate hosts), each with the
 * resources of its side (struct example_res) set up before and released after.
 */
#ifndef RPMA_SIM_EXAMPLES_EXAMPLE_H
#define RPMA_SIM_EXAMPLES_EXAMPLE_H

#include <librpma.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

struct example_res;

/*
 * provided by each example: runs one side. The frame has started res with a peer on addr's
 * device (example_begin) and releases whatever res holds afterwards (example_end, which says
 * "done" if all went well), so a side returns at once on failure. Return 0 on success.
 */
int example_server(struct example_res *res, const char *addr, const char *port);
int example_client(struct example_res *res, const char *addr, const char *port);

/* the server calls this once it listens, so that an in-process client may connect */
void example_server_listening(void);

/*
 * Before it takes a connection request, the server waits for one here: at once in a process
 * of its own; in one process with the client ('both'), until a request is there or the
 * client has failed (then -1, after saying so: no client will connect).
 */
int example_wait_for_client(const char *side, struct rpma_ep *ep);

/*
 * In one process with the client: an fd that becomes readable once the client has failed
 * (for a server that waits for several things at once, with epoll); -1 otherwise.
 */
int example_client_gone_fd(void);

/* prints "[side] message" to stdout and flushes, so that output of both sides interleaves */
void example_say(const char *side, const char *format, ...) __attribute__((format(printf, 2, 3)));

/* reports a failed librpma call and returns -1 */
int example_fail(const char *side, const char *call, int ret);

/* waits for the next connection event and checks that it is the expected one */
int example_expect_event(const char *side, struct rpma_conn *conn, enum rpma_conn_event expected);

/* waits for one completion on cq and checks its status; prints it */
int example_wait_completion(const char *side, struct rpma_cq *cq, struct ibv_wc *wc);

/*
 * What a server tells its client about its memory, sent as connection private data (as
 * librpma's examples do with struct common_data): the MR descriptor, optionally followed by
 * the peer-cfg descriptor, and where in the region the data starts. 28 bytes, well within
 * the 56 bytes a client may send and the 196 bytes a server may answer with.
 */
#define EXAMPLE_DESCRIPTORS_MAX_SIZE 24

struct example_common_data {
	uint16_t data_offset; /* where the data starts in the memory region */
	uint8_t mr_desc_size; /* size of the MR descriptor at descriptors[0] */
	uint8_t pcfg_desc_size; /* size of the peer-cfg descriptor after it; 0: none */
	char descriptors[EXAMPLE_DESCRIPTORS_MAX_SIZE];
};

/* fills data with mr's descriptor and, if pcfg is not NULL, pcfg's descriptor after it */
int example_pack_descriptors(const char *side, const struct rpma_mr_local *mr, size_t data_offset,
		const struct rpma_peer_cfg *pcfg, struct example_common_data *data);

/*
 * reads the peer's private data from conn and decodes the remote MR from it; if pcfg_ptr is
 * not NULL it gets the peer's configuration, or NULL if the peer sent none
 */
int example_unpack_descriptors(const char *side, struct rpma_conn *conn,
		struct rpma_mr_remote **mr_ptr, size_t *data_offset,
		struct rpma_peer_cfg **pcfg_ptr);

/* finds the device for addr and creates a peer on it */
int example_peer_new(const char *side, const char *addr, enum rpma_util_ibv_context_type type,
		struct rpma_peer **peer_ptr);

/* connects a request (either side) and waits until the connection is established */
int example_conn_req_connect(const char *side, struct rpma_conn_req **req_ptr,
		const struct rpma_conn_private_data *pdata, struct rpma_conn **conn_ptr);

/* client: requests a connection to addr:port and waits until it is established */
int example_client_connect(const char *side, struct rpma_peer *peer, const char *addr,
		const char *port, const struct rpma_conn_cfg *cfg,
		const struct rpma_conn_private_data *pdata, struct rpma_conn **conn_ptr);

/* server: takes the next connection request from ep, accepts it and waits until established */
int example_server_accept(const char *side, struct rpma_ep *ep, const struct rpma_conn_cfg *cfg,
		const struct rpma_conn_private_data *pdata, struct rpma_conn **conn_ptr);

/* disconnects, then waits for the connection to close (the side that ends the talk) */
int example_disconnect(const char *side, struct rpma_conn *conn);

/* waits for the peer to close the connection, then disconnects (the side that listens) */
int example_wait_for_disconnect(const char *side, struct rpma_conn *conn);

/*
 * gets the next completion from cq, waiting (rpma_cq_wait) only when there is none yet, and
 * checks its status. Use it when several completions may arrive on one CQ: a wait may wake up
 * for a completion that an earlier call already took, and then it simply waits again.
 */
int example_next_completion(const char *side, struct rpma_cq *cq, struct ibv_wc *wc);

/*
 * the same for a connection whose CQs share one completion channel: rpma_cq_wait refuses
 * such a CQ, so this waits with rpma_conn_wait, which tells which CQ fired
 */
int example_next_completion_shared(
		const char *side, struct rpma_conn *conn, struct rpma_cq *cq, struct ibv_wc *wc);

/*
 * What one side of an example holds. example_begin() starts it with a peer, the helpers below
 * add to it, and example_end() releases whatever it holds at the end, on success and after a
 * failure alike. The frame calls both around example_server() and example_client().
 */
#define EXAMPLE_MRS_MAX 4
#define EXAMPLE_BUFS_MAX 4

struct example_res {
	const char *side; /* "server" or "client": the prefix of every line */
	struct rpma_peer *peer;
	struct rpma_mr_local *mrs[EXAMPLE_MRS_MAX]; /* registered by example_mr_reg() */
	const char *mr_names[EXAMPLE_MRS_MAX];
	int mrs_num;
	void *bufs[EXAMPLE_BUFS_MAX]; /* allocated by example_alloc() */
	int bufs_num;
	struct rpma_peer_cfg *pcfg; /* made by the side, or got from the peer */
	struct rpma_srq *srq;
	struct rpma_conn_cfg *cfg; /* for example_connect() and example_accept*() */
	bool shared_channel; /* cfg gives the connection a shared completion channel */
	struct rpma_ep *ep;
	struct rpma_conn *conn;
	bool initiator; /* made by example_connect(): disconnected at the end */
	struct rpma_mr_remote *remote_mr; /* got by example_get_remote() */
	struct example_common_data data; /* packed by example_pack_mr() ... */
	struct rpma_conn_private_data pdata; /* ... and pointed to by this */
};

/* zeroes res and creates its peer (example_peer_new) */
int example_begin(struct example_res *res, const char *side, const char *addr,
		enum rpma_util_ibv_context_type type);

/*
 * allocates memory to register, as librpma's examples do (their malloc_aligned): size bytes,
 * not rounded up, aligned to the page size, zeroed, and freed by example_end() after the MRs
 * are deregistered. Returns NULL, having said why, on failure.
 */
void *example_alloc(struct example_res *res, size_t size);

/* registers [ptr, ptr + size) with usage as the MR called name (may be NULL) */
int example_mr_reg(struct example_res *res, void *ptr, size_t size, int usage, const char *name,
		struct rpma_mr_local **mr_ptr);

/* creates res->cfg: with a receive CQ of rcq_size (0: none) and a shared channel or not */
int example_conn_cfg_new(struct example_res *res, uint32_t rcq_size, bool shared_channel);

/* packs mr's descriptor (and res->pcfg's, if any) into res->pdata, data starting at offset */
int example_pack_mr(struct example_res *res, const struct rpma_mr_local *mr, size_t offset);

/* server: listens on addr:port, says so, and lets an in-process client go ahead */
int example_listen(struct example_res *res, const char *addr, const char *port);

/* server: accepts the next connection request (example_server_accept, with res->cfg) */
int example_accept(struct example_res *res, const struct rpma_conn_private_data *pdata);

/*
 * server: takes the next connection request, posts count receives of len bytes to it (the
 * i-th at offset i * len of mr, with op_context i) and accepts it: the client may send at once
 */
int example_accept_with_recvs(struct example_res *res, struct rpma_mr_local *mr, size_t len,
		int count, const struct rpma_conn_private_data *pdata);

/* client: connects to addr:port with res->cfg and pdata (example_client_connect) */
int example_connect(struct example_res *res, const char *addr, const char *port,
		const struct rpma_conn_private_data *pdata);

/*
 * client: decodes the server's memory (res->remote_mr) from the private data and checks that
 * it has room for needed bytes at the offset the server gave; offset and size may be NULL. If
 * with_pcfg, res->pcfg gets the server's peer configuration, or NULL if it sent none.
 */
int example_get_remote(struct example_res *res, size_t needed, size_t *offset, size_t *size,
		bool with_pcfg);

/* gets the connection's CQ and, if rcq_ptr is not NULL, its receive CQ, which must exist */
int example_get_cqs(struct example_res *res, struct rpma_cq **cq_ptr, struct rpma_cq **rcq_ptr);

/* example_next_completion, or example_next_completion_shared on a shared channel */
int example_next(struct example_res *res, struct rpma_cq *cq, struct ibv_wc *wc);

/* example_next, and checks that the completion has the expected opcode */
int example_next_expect(struct example_res *res, struct rpma_cq *cq, enum ibv_wc_opcode opcode,
		struct ibv_wc *wc);

/* registers recv_buf (usage RECV, "recv") and send_buf (usage SEND, "send"), size bytes each */
int example_mr_reg_msgs(struct example_res *res, void *recv_buf, void *send_buf, size_t size,
		struct rpma_mr_local **recv_mr_ptr, struct rpma_mr_local **send_mr_ptr);

/*
 * one round trip of a message ping-pong: posts a receive of len bytes into recv_mr, sends
 * len bytes from send_mr, and takes completions from cq (where both complete) until the send
 * and a receive of len bytes have completed, in either order
 */
int example_send_and_recv(struct example_res *res, struct rpma_cq *cq,
		struct rpma_mr_local *send_mr, struct rpma_mr_local *recv_mr, uint32_t len);

/* checks that rpma_cq_wait refuses cq, which reports through a shared channel */
int example_expect_shared_channel(struct example_res *res, struct rpma_cq *cq);

/*
 * ends res->conn: deletes res->remote_mr, disconnects the connection if this side made it
 * (example_connect), and deletes it. Returns result, or -1 if any of it failed.
 */
int example_conn_close(struct example_res *res, int result);

/*
 * releases everything res holds (example_conn_close, then the endpoint, the configurations,
 * the SRQ, the MRs in reverse order, the memory from example_alloc() and the peer) and says
 * "done" if all went well.
 * Returns result, or -1 if any release failed.
 */
int example_end(struct example_res *res, int result);

#ifdef __cplusplus
}
#endif

#endif /* RPMA_SIM_EXAMPLES_EXAMPLE_H */
