/*
 * example.c -- helpers shared by the examples: output, error reports, events, completions.
 */
#include "examples/common/example.h"

#include <stdarg.h>
#include <string.h>

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
example_expect_event(const char *side, struct rpma_conn *conn,
		enum rpma_conn_event expected)
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

int
example_wait_completion(const char *side, struct rpma_cq *cq, struct ibv_wc *wc)
{
	int ret = rpma_cq_wait(cq);
	if (ret)
		return example_fail(side, "rpma_cq_wait", ret);
	ret = rpma_cq_get_wc(cq, 1, wc, NULL);
	if (ret)
		return example_fail(side, "rpma_cq_get_wc", ret);
	if (wc->status != IBV_WC_SUCCESS) {
		example_say(side, "ERROR: completion failed: %s",
			ibv_wc_status_str(wc->status));
		return -1;
	}
	return 0;
}

int
example_pack_descriptors(const char *side, const struct rpma_mr_local *mr,
		size_t data_offset, const struct rpma_peer_cfg *pcfg,
		struct example_common_data *data)
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
	if (pcfg && (ret = rpma_peer_cfg_get_descriptor(pcfg,
			&data->descriptors[mr_desc_size])))
		return example_fail(side, "rpma_peer_cfg_get_descriptor", ret);
	return 0;
}

int
example_unpack_descriptors(const char *side, struct rpma_conn *conn,
		struct rpma_mr_remote **mr_ptr, size_t *data_offset,
		struct rpma_peer_cfg **pcfg_ptr)
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
	if ((ret = rpma_mr_remote_from_descriptor(&data->descriptors[0], data->mr_desc_size,
			mr_ptr)))
		return example_fail(side, "rpma_mr_remote_from_descriptor", ret);
	if (data_offset)
		*data_offset = data->data_offset;
	if (pcfg_ptr && data->pcfg_desc_size > 0 && (ret = rpma_peer_cfg_from_descriptor(
			&data->descriptors[data->mr_desc_size], data->pcfg_desc_size,
			pcfg_ptr))) {
		(void) rpma_mr_remote_delete(mr_ptr);
		return example_fail(side, "rpma_peer_cfg_from_descriptor", ret);
	}
	return 0;
}

int
example_peer_new(const char *side, const char *addr,
		enum rpma_util_ibv_context_type type, struct rpma_peer **peer_ptr)
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
		(void) rpma_conn_delete(conn_ptr);
		return -1;
	}
	return 0;
}

int
example_client_connect(const char *side, struct rpma_peer *peer, const char *addr,
		const char *port, const struct rpma_conn_cfg *cfg,
		const struct rpma_conn_private_data *pdata, struct rpma_conn **conn_ptr)
{
	struct rpma_conn_req *req = NULL;
	int ret = rpma_conn_req_new(peer, addr, port, cfg, &req);
	if (ret)
		return example_fail(side, "rpma_conn_req_new", ret);
	return example_conn_req_connect(side, &req, pdata, conn_ptr);
}

int
example_server_accept(const char *side, struct rpma_ep *ep,
		const struct rpma_conn_cfg *cfg, const struct rpma_conn_private_data *pdata,
		struct rpma_conn **conn_ptr)
{
	struct rpma_conn_req *req = NULL;
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

/* checks the status of a completion got from a CQ */
static int
completion_status(const char *side, const struct ibv_wc *wc)
{
	if (wc->status != IBV_WC_SUCCESS) {
		example_say(side, "ERROR: completion failed: %s",
			ibv_wc_status_str(wc->status));
		return -1;
	}
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
example_next_completion_shared(const char *side, struct rpma_conn *conn,
		struct rpma_cq *cq, struct ibv_wc *wc)
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
				fired == NULL ? "no" : fired == rcq ? "the receive" : "the main",
				is_rcq);
			return -1;
		}
	}
	if (ret)
		return example_fail(side, "rpma_cq_get_wc", ret);
	return completion_status(side, wc);
}
