/*
 * example.c -- helpers shared by the examples: output, error reports, events, completions, and
 * the setup and teardown of a side (struct example_res), the memory it registers included.
 */
#include "examples/common/example.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void
example_say(const char *side, const char *format, ...)
{
	va_list args;
	flockfile(stdout);
	printf("[%s] ", side);
	va_start(args, format);
	vprintf(format, args);
	va_end(args);
	printf("\n");
	fflush(stdout);
	funlockfile(stdout);
}

int
example_fail(const char *side, const char *call, int ret)
{
	example_say(side, "ERROR: %s failed: %s", call, rpma_err_2str(ret));
	return -1;
}

int
example_expect_event(const char *side, struct rpma_conn *conn, enum rpma_conn_event expected)
{
	enum rpma_conn_event event = RPMA_CONN_UNDEFINED;
	int ret = rpma_conn_next_event(conn, &event);
	if (ret)
		return example_fail(side, "rpma_conn_next_event", ret);
	if (event != expected) {
		example_say(side, "ERROR: expected \"%s\", got \"%s\"",
				rpma_utils_conn_event_2str(expected),
				rpma_utils_conn_event_2str(event));
		return -1;
	}
	example_say(side, "%s", rpma_utils_conn_event_2str(event));
	return 0;
}

/* checks the status of a completion got from a CQ */
static int
completion_status(const char *side, const struct ibv_wc *wc)
{
	if (wc->status != IBV_WC_SUCCESS) {
		example_say(side, "ERROR: completion failed: %s", ibv_wc_status_str(wc->status));
		return -1;
	}
	return 0;
}

int
example_wait_completion(const char *side, struct rpma_cq *cq, struct ibv_wc *wc)
{
	int ret = rpma_cq_wait(cq);
	if (ret)
		return example_fail(side, "rpma_cq_wait", ret);
	ret = rpma_cq_get_wc(cq, 1, wc, NULL);
	if (ret)
		return example_fail(side, "rpma_cq_get_wc", ret);
	return completion_status(side, wc);
}

int
example_pack_descriptors(const char *side, const struct rpma_mr_local *mr, size_t data_offset,
		const struct rpma_peer_cfg *pcfg, struct example_common_data *data)
{
	size_t mr_desc_size = 0, pcfg_desc_size = 0;
	int ret;

	memset(data, 0, sizeof(*data));
	if ((ret = rpma_mr_get_descriptor_size(mr, &mr_desc_size)))
		return example_fail(side, "rpma_mr_get_descriptor_size", ret);
	if (pcfg && (ret = rpma_peer_cfg_get_descriptor_size(pcfg, &pcfg_desc_size)))
		return example_fail(side, "rpma_peer_cfg_get_descriptor_size", ret);
	if (mr_desc_size + pcfg_desc_size > EXAMPLE_DESCRIPTORS_MAX_SIZE ||
			data_offset > UINT16_MAX) {
		example_say(side, "ERROR: the descriptors do not fit the private data");
		return -1;
	}
	data->data_offset = (uint16_t)data_offset;
	data->mr_desc_size = (uint8_t)mr_desc_size;
	data->pcfg_desc_size = (uint8_t)pcfg_desc_size;
	if ((ret = rpma_mr_get_descriptor(mr, &data->descriptors[0])))
		return example_fail(side, "rpma_mr_get_descriptor", ret);
	if (pcfg && (ret = rpma_peer_cfg_get_descriptor(pcfg, &data->descriptors[mr_desc_size])))
		return example_fail(side, "rpma_peer_cfg_get_descriptor", ret);
	return 0;
}

int
example_unpack_descriptors(const char *side, struct rpma_conn *conn, struct rpma_mr_remote **mr_ptr,
		size_t *data_offset, struct rpma_peer_cfg **pcfg_ptr)
{
	struct rpma_conn_private_data pdata;
	int ret;

	if (pcfg_ptr)
		*pcfg_ptr = NULL;
	if ((ret = rpma_conn_get_private_data(conn, &pdata)))
		return example_fail(side, "rpma_conn_get_private_data", ret);
	/* the private data may be longer than what was sent, never shorter */
	if (pdata.ptr == NULL || pdata.len < sizeof(struct example_common_data)) {
		example_say(side, "ERROR: the peer sent no descriptors (%u bytes of private data)",
				(unsigned)pdata.len);
		return -1;
	}
	struct example_common_data *data = pdata.ptr;
	if ((size_t)data->mr_desc_size + data->pcfg_desc_size > EXAMPLE_DESCRIPTORS_MAX_SIZE) {
		example_say(side, "ERROR: the descriptors the peer sent are too long");
		return -1;
	}
	if ((ret = rpma_mr_remote_from_descriptor(
			     &data->descriptors[0], data->mr_desc_size, mr_ptr)))
		return example_fail(side, "rpma_mr_remote_from_descriptor", ret);
	if (data_offset)
		*data_offset = data->data_offset;
	if (pcfg_ptr && data->pcfg_desc_size > 0 &&
			(ret = rpma_peer_cfg_from_descriptor(&data->descriptors[data->mr_desc_size],
					 data->pcfg_desc_size, pcfg_ptr))) {
		(void)rpma_mr_remote_delete(mr_ptr);
		return example_fail(side, "rpma_peer_cfg_from_descriptor", ret);
	}
	return 0;
}

int
example_peer_new(const char *side, const char *addr, enum rpma_util_ibv_context_type type,
		struct rpma_peer **peer_ptr)
{
	struct ibv_context *ibv_ctx = NULL;
	int ret;

	if ((ret = rpma_utils_get_ibv_context(addr, type, &ibv_ctx)))
		return example_fail(side, "rpma_utils_get_ibv_context", ret);
	if ((ret = rpma_peer_new(ibv_ctx, peer_ptr)))
		return example_fail(side, "rpma_peer_new", ret);
	return 0;
}

int
example_conn_req_connect(const char *side, struct rpma_conn_req **req_ptr,
		const struct rpma_conn_private_data *pdata, struct rpma_conn **conn_ptr)
{
	int ret = rpma_conn_req_connect(req_ptr, pdata, conn_ptr);
	if (ret)
		return example_fail(side, "rpma_conn_req_connect", ret);
	if (example_expect_event(side, *conn_ptr, RPMA_CONN_ESTABLISHED)) {
		(void)rpma_conn_delete(conn_ptr);
		return -1;
	}
	return 0;
}

int
example_client_connect(const char *side, struct rpma_peer *peer, const char *addr, const char *port,
		const struct rpma_conn_cfg *cfg, const struct rpma_conn_private_data *pdata,
		struct rpma_conn **conn_ptr)
{
	struct rpma_conn_req *req = NULL;
	int ret = rpma_conn_req_new(peer, addr, port, cfg, &req);
	if (ret)
		return example_fail(side, "rpma_conn_req_new", ret);
	return example_conn_req_connect(side, &req, pdata, conn_ptr);
}

int
example_server_accept(const char *side, struct rpma_ep *ep, const struct rpma_conn_cfg *cfg,
		const struct rpma_conn_private_data *pdata, struct rpma_conn **conn_ptr)
{
	struct rpma_conn_req *req = NULL;
	if (example_wait_for_client(side, ep))
		return -1;
	int ret = rpma_ep_next_conn_req(ep, cfg, &req);
	if (ret)
		return example_fail(side, "rpma_ep_next_conn_req", ret);
	return example_conn_req_connect(side, &req, pdata, conn_ptr);
}

int
example_disconnect(const char *side, struct rpma_conn *conn)
{
	int ret = rpma_conn_disconnect(conn);
	if (ret)
		return example_fail(side, "rpma_conn_disconnect", ret);
	return example_expect_event(side, conn, RPMA_CONN_CLOSED);
}

int
example_wait_for_disconnect(const char *side, struct rpma_conn *conn)
{
	if (example_expect_event(side, conn, RPMA_CONN_CLOSED))
		return -1;
	int ret = rpma_conn_disconnect(conn);
	if (ret)
		return example_fail(side, "rpma_conn_disconnect", ret);
	return 0;
}

int
example_next_completion(const char *side, struct rpma_cq *cq, struct ibv_wc *wc)
{
	int ret;
	/* a completion that is there already needs no wait */
	while ((ret = rpma_cq_get_wc(cq, 1, wc, NULL)) == RPMA_E_NO_COMPLETION) {
		if ((ret = rpma_cq_wait(cq)))
			return example_fail(side, "rpma_cq_wait", ret);
	}
	if (ret)
		return example_fail(side, "rpma_cq_get_wc", ret);
	return completion_status(side, wc);
}

int
example_next_completion_shared(
		const char *side, struct rpma_conn *conn, struct rpma_cq *cq, struct ibv_wc *wc)
{
	int ret;
	while ((ret = rpma_cq_get_wc(cq, 1, wc, NULL)) == RPMA_E_NO_COMPLETION) {
		/*
		 * wakes up for either CQ of the connection; if it is the other one, its
		 * completion stays there for a later call, and this one waits again
		 */
		struct rpma_cq *fired = NULL;
		bool is_rcq = false;
		if ((ret = rpma_conn_wait(conn, 0, &fired, &is_rcq)))
			return example_fail(side, "rpma_conn_wait", ret);
		struct rpma_cq *rcq = NULL;
		if ((ret = rpma_conn_get_rcq(conn, &rcq)))
			return example_fail(side, "rpma_conn_get_rcq", ret);
		if (fired == NULL || is_rcq != (fired == rcq)) {
			example_say(side, "ERROR: rpma_conn_wait reported %s CQ with is_rcq %d",
					fired == NULL                  ? "no"
							: fired == rcq ? "the receive"
								       : "the main",
					is_rcq);
			return -1;
		}
	}
	if (ret)
		return example_fail(side, "rpma_cq_get_wc", ret);
	return completion_status(side, wc);
}

int
example_begin(struct example_res *res, const char *side, const char *addr,
		enum rpma_util_ibv_context_type type)
{
	memset(res, 0, sizeof(*res));
	res->side = side;
	return example_peer_new(side, addr, type, &res->peer);
}

/* "call(name)", or just "call" without a name */
static const char *
named(char *buf, size_t size, const char *call, const char *name)
{
	if (name == NULL)
		return call;
	snprintf(buf, size, "%s(%s)", call, name);
	return buf;
}

void *
example_alloc(struct example_res *res, size_t size)
{
	void *ptr = NULL;
	if (res->bufs_num == EXAMPLE_BUFS_MAX) {
		example_say(res->side, "ERROR: more than %d buffers", EXAMPLE_BUFS_MAX);
		return NULL;
	}
	long pagesize = sysconf(_SC_PAGESIZE);
	if (pagesize < 0) {
		example_say(res->side, "ERROR: sysconf(_SC_PAGESIZE) failed: %s", strerror(errno));
		return NULL;
	}
	/* not rounded up to whole pages: the bytes after size on the last page are not ours */
	int ret = posix_memalign(&ptr, (size_t)pagesize, size);
	if (ret) {
		example_say(res->side, "ERROR: posix_memalign(%zu bytes) failed: %s", size,
				strerror(ret));
		return NULL;
	}
	memset(ptr, 0, size);
	res->bufs[res->bufs_num++] = ptr;
	return ptr;
}

int
example_mr_reg(struct example_res *res, void *ptr, size_t size, int usage, const char *name,
		struct rpma_mr_local **mr_ptr)
{
	char call[64];
	if (res->mrs_num == EXAMPLE_MRS_MAX) {
		example_say(res->side, "ERROR: more than %d MRs", EXAMPLE_MRS_MAX);
		return -1;
	}
	int ret = rpma_mr_reg(res->peer, ptr, size, usage, mr_ptr);
	if (ret)
		return example_fail(res->side, named(call, sizeof(call), "rpma_mr_reg", name), ret);
	res->mrs[res->mrs_num] = *mr_ptr;
	res->mr_names[res->mrs_num] = name;
	res->mrs_num++;
	return 0;
}

int
example_conn_cfg_new(struct example_res *res, uint32_t rcq_size, bool shared_channel)
{
	int ret = rpma_conn_cfg_new(&res->cfg);
	if (ret)
		return example_fail(res->side, "rpma_conn_cfg_new", ret);
	if (rcq_size > 0 && (ret = rpma_conn_cfg_set_rcq_size(res->cfg, rcq_size)))
		return example_fail(res->side, "rpma_conn_cfg_set_rcq_size", ret);
	if (shared_channel && (ret = rpma_conn_cfg_set_compl_channel(res->cfg, true)))
		return example_fail(res->side, "rpma_conn_cfg_set_compl_channel", ret);
	res->shared_channel = shared_channel;
	return 0;
}

int
example_pack_mr(struct example_res *res, const struct rpma_mr_local *mr, size_t offset)
{
	if (example_pack_descriptors(res->side, mr, offset, res->pcfg, &res->data))
		return -1;
	res->pdata.ptr = &res->data;
	res->pdata.len = sizeof(res->data);
	return 0;
}

int
example_listen(struct example_res *res, const char *addr, const char *port)
{
	int ret = rpma_ep_listen(res->peer, addr, port, &res->ep);
	if (ret)
		return example_fail(res->side, "rpma_ep_listen", ret);
	example_say(res->side, "listening on %s:%s", addr, port);
	example_server_listening();
	return 0;
}

int
example_accept(struct example_res *res, const struct rpma_conn_private_data *pdata)
{
	return example_server_accept(res->side, res->ep, res->cfg, pdata, &res->conn);
}

int
example_accept_with_recvs(struct example_res *res, struct rpma_mr_local *mr, size_t len, int count,
		const struct rpma_conn_private_data *pdata)
{
	struct rpma_conn_req *req = NULL;
	if (example_wait_for_client(res->side, res->ep))
		return -1;
	int ret = rpma_ep_next_conn_req(res->ep, res->cfg, &req);
	if (ret)
		return example_fail(res->side, "rpma_ep_next_conn_req", ret);
	for (uintptr_t i = 0; i < (uintptr_t)count; i++) {
		if ((ret = rpma_conn_req_recv(req, mr, i * len, len, (const void *)i))) {
			(void)rpma_conn_req_delete(&req);
			return example_fail(res->side, "rpma_conn_req_recv", ret);
		}
	}
	return example_conn_req_connect(res->side, &req, pdata, &res->conn);
}

int
example_connect(struct example_res *res, const char *addr, const char *port,
		const struct rpma_conn_private_data *pdata)
{
	example_say(res->side, "connecting to %s:%s", addr, port);
	if (example_client_connect(res->side, res->peer, addr, port, res->cfg, pdata, &res->conn))
		return -1;
	res->initiator = true;
	return 0;
}

int
example_get_remote(struct example_res *res, size_t needed, size_t *offset, size_t *size,
		bool with_pcfg)
{
	size_t remote_offset = 0, remote_size = 0;
	int ret;

	if (example_unpack_descriptors(res->side, res->conn, &res->remote_mr, &remote_offset,
			    with_pcfg ? &res->pcfg : NULL))
		return -1;
	if ((ret = rpma_mr_remote_get_size(res->remote_mr, &remote_size)))
		return example_fail(res->side, "rpma_mr_remote_get_size", ret);
	if (remote_offset > remote_size || needed > remote_size - remote_offset) {
		example_say(res->side, "ERROR: the server's memory (%zu bytes) is too small",
				remote_size);
		return -1;
	}
	if (offset)
		*offset = remote_offset;
	if (size)
		*size = remote_size;
	return 0;
}

int
example_get_cqs(struct example_res *res, struct rpma_cq **cq_ptr, struct rpma_cq **rcq_ptr)
{
	int ret = rpma_conn_get_cq(res->conn, cq_ptr);
	if (ret)
		return example_fail(res->side, "rpma_conn_get_cq", ret);
	if (rcq_ptr == NULL)
		return 0;
	if ((ret = rpma_conn_get_rcq(res->conn, rcq_ptr)))
		return example_fail(res->side, "rpma_conn_get_rcq", ret);
	if (*rcq_ptr == NULL) {
		example_say(res->side, "ERROR: the connection has no receive CQ");
		return -1;
	}
	return 0;
}

int
example_next(struct example_res *res, struct rpma_cq *cq, struct ibv_wc *wc)
{
	if (res->shared_channel)
		return example_next_completion_shared(res->side, res->conn, cq, wc);
	return example_next_completion(res->side, cq, wc);
}

int
example_next_expect(struct example_res *res, struct rpma_cq *cq, enum ibv_wc_opcode opcode,
		struct ibv_wc *wc)
{
	if (example_next(res, cq, wc))
		return -1;
	if (wc->opcode != opcode) {
		example_say(res->side, "ERROR: expected a completion with opcode %d, got opcode %d",
				opcode, wc->opcode);
		return -1;
	}
	return 0;
}

int
example_mr_reg_msgs(struct example_res *res, void *recv_buf, void *send_buf, size_t size,
		struct rpma_mr_local **recv_mr_ptr, struct rpma_mr_local **send_mr_ptr)
{
	if (example_mr_reg(res, recv_buf, size, RPMA_MR_USAGE_RECV, "recv", recv_mr_ptr))
		return -1;
	return example_mr_reg(res, send_buf, size, RPMA_MR_USAGE_SEND, "send", send_mr_ptr);
}

int
example_send_and_recv(struct example_res *res, struct rpma_cq *cq, struct rpma_mr_local *send_mr,
		struct rpma_mr_local *recv_mr, uint32_t len)
{
	int ret = rpma_recv(res->conn, recv_mr, 0, len, NULL);
	if (ret)
		return example_fail(res->side, "rpma_recv", ret);
	if ((ret = rpma_send(res->conn, send_mr, 0, len, RPMA_F_COMPLETION_ALWAYS, NULL)))
		return example_fail(res->side, "rpma_send", ret);

	bool sent = false, received = false;
	while (!sent || !received) {
		struct ibv_wc wc;
		if (example_next(res, cq, &wc))
			return -1;
		if (wc.opcode == IBV_WC_SEND) {
			sent = true;
		} else if (wc.opcode == IBV_WC_RECV && wc.byte_len == len) {
			received = true;
		} else {
			example_say(res->side, "ERROR: unexpected completion: opcode %d, %u bytes",
					wc.opcode, wc.byte_len);
			return -1;
		}
	}
	return 0;
}

int
example_expect_shared_channel(struct example_res *res, struct rpma_cq *cq)
{
	int ret = rpma_cq_wait(cq);
	if (ret != RPMA_E_SHARED_CHANNEL) {
		example_say(res->side, "ERROR: rpma_cq_wait returned %d, not RPMA_E_SHARED_CHANNEL",
				ret);
		return -1;
	}
	example_say(res->side, "rpma_cq_wait refuses: \"%s\"; waiting with rpma_conn_wait instead",
			rpma_err_2str(ret));
	return 0;
}

int
example_conn_close(struct example_res *res, int result)
{
	int ret;

	if (res->remote_mr)
		(void)rpma_mr_remote_delete(&res->remote_mr);
	if (res->conn == NULL)
		return result;
	if (res->initiator && example_disconnect(res->side, res->conn))
		result = -1;
	res->initiator = false;
	if ((ret = rpma_conn_delete(&res->conn)))
		result = example_fail(res->side, "rpma_conn_delete", ret);
	return result;
}

int
example_end(struct example_res *res, int result)
{
	char call[64];
	int ret;

	result = example_conn_close(res, result);
	if (res->ep && (ret = rpma_ep_shutdown(&res->ep)))
		result = example_fail(res->side, "rpma_ep_shutdown", ret);
	if (res->cfg && (ret = rpma_conn_cfg_delete(&res->cfg)))
		result = example_fail(res->side, "rpma_conn_cfg_delete", ret);
	if (res->srq && (ret = rpma_srq_delete(&res->srq)))
		result = example_fail(res->side, "rpma_srq_delete", ret);
	if (res->pcfg && (ret = rpma_peer_cfg_delete(&res->pcfg)))
		result = example_fail(res->side, "rpma_peer_cfg_delete", ret);
	while (res->mrs_num > 0) {
		int i = --res->mrs_num;
		if ((ret = rpma_mr_dereg(&res->mrs[i])))
			result = example_fail(res->side,
					named(call, sizeof(call), "rpma_mr_dereg",
							res->mr_names[i]),
					ret);
	}
	/* the memory outlives its MRs, never the other way round */
	while (res->bufs_num > 0)
		free(res->bufs[--res->bufs_num]);
	if (res->peer && (ret = rpma_peer_delete(&res->peer)))
		result = example_fail(res->side, "rpma_peer_delete", ret);
	if (result == 0)
		example_say(res->side, "done");
	return result;
}
