/*
 * swap_program.c -- a librpma program of our own, built outside Bazel against Debian's
 * /usr/include/librpma.h and linked with -lrpma, to prove the run-time swap: with Debian's
 * librpma it fails cleanly (no RDMA device here), with rpma-sim's librpma.so.0 on
 * LD_LIBRARY_PATH it connects, writes, reads back and exchanges a message.
 *
 * usage: swap_program PORT; exit status 0 on success, 3 when no device is found, 1 otherwise.
 */
#include <librpma.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ADDR "127.0.0.1"
#define CHECK(call) \
	do { \
		int r_ = (call); \
		if (r_) { \
			fprintf(stderr, "%s failed: %s\n", #call, rpma_err_2str(r_)); \
			exit(1); \
		} \
	} while (0)

static const char *port;
static struct rpma_peer *peer;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int listening;
static char server_buf[64];
static char server_msg[64];

static void
wait_event(struct rpma_conn *conn, enum rpma_conn_event expected)
{
	enum rpma_conn_event event;
	CHECK(rpma_conn_next_event(conn, &event));
	if (event != expected) {
		fprintf(stderr, "unexpected event %s\n", rpma_utils_conn_event_2str(event));
		exit(1);
	}
}

static void
wait_wc(struct rpma_cq *cq, enum ibv_wc_opcode opcode)
{
	struct ibv_wc wc;
	CHECK(rpma_cq_wait(cq));
	CHECK(rpma_cq_get_wc(cq, 1, &wc, NULL));
	if (wc.status != IBV_WC_SUCCESS || wc.opcode != opcode) {
		fprintf(stderr, "completion: status %d opcode %d\n", wc.status, wc.opcode);
		exit(1);
	}
}

static void *
server(void *arg)
{
	struct rpma_ep *ep;
	struct rpma_conn_req *req;
	struct rpma_conn *conn;
	struct rpma_mr_local *mr, *msg_mr;
	char desc[64];
	size_t desc_size;

	CHECK(rpma_ep_listen(peer, ADDR, port, &ep));
	pthread_mutex_lock(&lock);
	listening = 1;
	pthread_cond_signal(&cond);
	pthread_mutex_unlock(&lock);

	CHECK(rpma_mr_reg(peer, server_buf, sizeof(server_buf),
			RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC, &mr));
	CHECK(rpma_mr_reg(peer, server_msg, sizeof(server_msg), RPMA_MR_USAGE_RECV, &msg_mr));
	CHECK(rpma_mr_get_descriptor_size(mr, &desc_size));
	CHECK(rpma_mr_get_descriptor(mr, desc));
	CHECK(rpma_ep_next_conn_req(ep, NULL, &req));
	CHECK(rpma_conn_req_recv(req, msg_mr, 0, sizeof(server_msg), NULL));
	struct rpma_conn_private_data pdata = { desc, (uint8_t)desc_size };
	CHECK(rpma_conn_req_connect(&req, &pdata, &conn));
	wait_event(conn, RPMA_CONN_ESTABLISHED);

	struct rpma_cq *cq;
	CHECK(rpma_conn_get_cq(conn, &cq));
	wait_wc(cq, IBV_WC_RECV);
	printf("server: received \"%s\"; memory holds \"%s\"\n", server_msg, server_buf);
	wait_event(conn, RPMA_CONN_CLOSED);
	CHECK(rpma_conn_disconnect(conn));
	CHECK(rpma_conn_delete(&conn));
	CHECK(rpma_mr_dereg(&msg_mr));
	CHECK(rpma_mr_dereg(&mr));
	CHECK(rpma_ep_shutdown(&ep));
	return NULL;
}

int
main(int argc, char *argv[])
{
	struct ibv_context *ctx;
	if (argc < 2) {
		fprintf(stderr, "usage: %s PORT\n", argv[0]);
		return 1;
	}
	port = argv[1];
	int ret = rpma_utils_get_ibv_context(ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx);
	if (ret) {
		fprintf(stderr, "no RDMA device: %s\n", rpma_err_2str(ret));
		return 3;
	}
	CHECK(rpma_peer_new(ctx, &peer));

	pthread_t thread;
	pthread_create(&thread, NULL, server, NULL);
	pthread_mutex_lock(&lock);
	while (!listening)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);

	static char local[64] = "written by the swapped-in client";
	static char readback[64];
	static char message[64] = "hello over the simulator";
	struct rpma_mr_local *src, *dst, *msg;
	struct rpma_mr_remote *remote;
	struct rpma_conn_req *req;
	struct rpma_conn *conn;
	struct rpma_conn_private_data pdata;
	struct rpma_cq *cq;

	CHECK(rpma_mr_reg(peer, local, sizeof(local), RPMA_MR_USAGE_WRITE_SRC, &src));
	CHECK(rpma_mr_reg(peer, readback, sizeof(readback), RPMA_MR_USAGE_READ_DST, &dst));
	CHECK(rpma_mr_reg(peer, message, sizeof(message), RPMA_MR_USAGE_SEND, &msg));
	CHECK(rpma_conn_req_new(peer, ADDR, port, NULL, &req));
	CHECK(rpma_conn_req_connect(&req, NULL, &conn));
	wait_event(conn, RPMA_CONN_ESTABLISHED);
	CHECK(rpma_conn_get_private_data(conn, &pdata));
	CHECK(rpma_mr_remote_from_descriptor(pdata.ptr, pdata.len, &remote));
	CHECK(rpma_conn_get_cq(conn, &cq));

	CHECK(rpma_write(conn, remote, 0, src, 0, sizeof(local), RPMA_F_COMPLETION_ALWAYS, NULL));
	wait_wc(cq, IBV_WC_RDMA_WRITE);
	CHECK(rpma_read(conn, dst, 0, remote, 0, sizeof(readback), RPMA_F_COMPLETION_ALWAYS, NULL));
	wait_wc(cq, IBV_WC_RDMA_READ);
	CHECK(rpma_send(conn, msg, 0, strlen(message) + 1, RPMA_F_COMPLETION_ALWAYS, NULL));
	wait_wc(cq, IBV_WC_SEND);
	printf("client: read back \"%s\"\n", readback);

	CHECK(rpma_conn_disconnect(conn));
	wait_event(conn, RPMA_CONN_CLOSED);
	CHECK(rpma_conn_delete(&conn));
	pthread_join(thread, NULL);
	CHECK(rpma_mr_remote_delete(&remote));
	CHECK(rpma_mr_dereg(&src));
	CHECK(rpma_mr_dereg(&dst));
	CHECK(rpma_mr_dereg(&msg));
	CHECK(rpma_peer_delete(&peer));
	if (strcmp(readback, local) != 0) {
		fprintf(stderr, "read back the wrong bytes\n");
		return 1;
	}
	printf("SWAP OK\n");
	return 0;
}
