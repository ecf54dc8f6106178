// link_watch.cc -- one side of a connection that waits for the link to break.
//
//   link_watch server ADDR PORT    listens, accepts one client
//   link_watch client ADDR PORT    connects
//
// Each side posts a receive nothing will fill, prints "ESTABLISHED" (or "NOT ESTABLISHED:"
// and the event it got instead, such as RPMA_CONN_UNREACHABLE), and waits for the next
// connection event (a minute at most: only a safety net). two_hosts_test.sh then takes the
// link down: no FIN, no RST reaches either side, so only the connection's liveness watch
// can tell. Each side must print "EVENT RPMA_CONN_LOST" and see its receive flushed
// (IBV_WC_WR_FLUSH_ERR); it exits 0 only then.
#include <infiniband/verbs.h>
#include <librpma.h>
#include <stdio.h>
#include <string.h>

#include <string>
#include <vector>

#include "tests/integration/integration_support.h"

namespace {

constexpr int kWaitForLossMs = 60000;

const char* EventName(rpma_conn_event event) {
  switch (event) {
    case RPMA_CONN_UNDEFINED:
      return "RPMA_CONN_UNDEFINED";
    case RPMA_CONN_ESTABLISHED:
      return "RPMA_CONN_ESTABLISHED";
    case RPMA_CONN_CLOSED:
      return "RPMA_CONN_CLOSED";
    case RPMA_CONN_LOST:
      return "RPMA_CONN_LOST";
    case RPMA_CONN_REJECTED:
      return "RPMA_CONN_REJECTED";
    case RPMA_CONN_UNREACHABLE:
      return "RPMA_CONN_UNREACHABLE";
  }
  return "?";
}

int Fail(const char* what, int ret) {
  printf("ERROR %s: %s\n", what, rpma_err_2str(ret));
  return 1;
}

int Run(bool server, const char* addr, const char* port) {
  ibv_context* ibv_ctx = nullptr;
  int ret = rpma_utils_get_ibv_context(
      addr, server ? RPMA_UTIL_IBV_CONTEXT_LOCAL : RPMA_UTIL_IBV_CONTEXT_REMOTE, &ibv_ctx);
  if (ret) return Fail("rpma_utils_get_ibv_context", ret);
  rpma_peer* peer = nullptr;
  if ((ret = rpma_peer_new(ibv_ctx, &peer))) return Fail("rpma_peer_new", ret);
  std::vector<char> buffer(4096);
  rpma_mr_local* mr = nullptr;
  if ((ret = rpma_mr_reg(peer, buffer.data(), buffer.size(), RPMA_MR_USAGE_RECV, &mr)))
    return Fail("rpma_mr_reg", ret);

  rpma_ep* ep = nullptr;
  rpma_conn_req* req = nullptr;
  if (server) {
    if ((ret = rpma_ep_listen(peer, addr, port, &ep))) return Fail("rpma_ep_listen", ret);
    printf("listening on %s:%s\n", addr, port);
    fflush(stdout);
    if ((ret = rpma_ep_next_conn_req(ep, nullptr, &req))) return Fail("next_conn_req", ret);
  } else if ((ret = rpma_conn_req_new(peer, addr, port, nullptr, &req))) {
    return Fail("rpma_conn_req_new", ret);
  }
  // The receive goes in before the connection is up, so it is outstanding when the link
  // breaks.
  if ((ret = rpma_conn_req_recv(req, mr, 0, 64, nullptr))) return Fail("conn_req_recv", ret);
  rpma_conn* conn = nullptr;
  if ((ret = rpma_conn_req_connect(&req, nullptr, &conn))) return Fail("connect", ret);
  rpma_conn_event event = RPMA_CONN_UNDEFINED;
  ret = integration::NextEvent(conn, integration::kSafetyTimeoutMs, &event);
  if (ret || event != RPMA_CONN_ESTABLISHED) {
    printf("NOT ESTABLISHED: %s\n", ret ? rpma_err_2str(ret) : EventName(event));
    return 1;
  }
  printf("ESTABLISHED\n");
  fflush(stdout);

  ret = integration::NextEvent(conn, kWaitForLossMs, &event);
  if (ret) return Fail("waiting for the connection to be lost", ret);
  printf("EVENT %s\n", EventName(event));
  rpma_cq* cq = nullptr;
  if ((ret = rpma_conn_get_cq(conn, &cq))) return Fail("rpma_conn_get_cq", ret);
  ibv_wc wc;
  ret = integration::NextCompletion(cq, integration::kSafetyTimeoutMs, &wc);
  if (ret) return Fail("the receive's completion", ret);
  printf("RECEIVE %s\n",
         wc.status == IBV_WC_WR_FLUSH_ERR ? "IBV_WC_WR_FLUSH_ERR" : ibv_wc_status_str(wc.status));
  rpma_conn_disconnect(conn);
  if ((ret = rpma_conn_delete(&conn))) return Fail("rpma_conn_delete", ret);
  if (ep && (ret = rpma_ep_shutdown(&ep))) return Fail("rpma_ep_shutdown", ret);
  if ((ret = rpma_mr_dereg(&mr))) return Fail("rpma_mr_dereg", ret);
  if ((ret = rpma_peer_delete(&peer))) return Fail("rpma_peer_delete", ret);
  bool lost = event == RPMA_CONN_LOST && wc.status == IBV_WC_WR_FLUSH_ERR;
  printf("%s\n", lost ? "done" : "ERROR: not a lost connection with its receive flushed");
  return lost ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4 || (strcmp(argv[1], "server") != 0 && strcmp(argv[1], "client") != 0)) {
    fprintf(stderr, "usage: %s server|client ADDR PORT\n", argv[0]);
    return 2;
  }
  setvbuf(stdout, nullptr, _IOLBF, 0);
  return Run(strcmp(argv[1], "server") == 0, argv[2], argv[3]);
}
