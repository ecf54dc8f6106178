// conn_events.cc -- waiting for a connection event with a safety-net timeout, the assertion
// that names the event that came instead, and which connections the kit has seen end.
#include <poll.h>

#include <errno.h>

#include <mutex>
#include <set>

#include "rpma_sim/testing.h"
#include "testing/test_child.h"

namespace rpma_sim {
namespace testing {
namespace {

std::mutex g_ended_mutex;
// Connections whose end the kit took, guarded by g_ended_mutex. Never destroyed: a test's
// static objects may still ask at exit.
std::set<const rpma_conn*>* g_ended = new std::set<const rpma_conn*>;

bool EndsConnection(rpma_conn_event event) {
  return event == RPMA_CONN_CLOSED || event == RPMA_CONN_LOST || event == RPMA_CONN_REJECTED ||
         event == RPMA_CONN_UNREACHABLE;
}

std::string EventName(rpma_conn_event event) {
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
  return "event " + std::to_string(static_cast<int>(event));
}

std::string Name(rpma_conn_event event) {
  return EventName(event) + " (" + rpma_utils_conn_event_2str(event) + ")";
}

}  // namespace

int NextConnEvent(rpma_conn* conn, rpma_conn_event* event, int timeout_ms) {
  int fd = -1;
  int ret = rpma_conn_get_event_fd(conn, &fd);
  if (ret != 0) return ret;
  pollfd pfd = {fd, POLLIN, 0};
  const long long deadline = NowMs() + timeout_ms;
  int ready;
  do {
    long long left = deadline - NowMs();
    ready = poll(&pfd, 1, left > 0 ? static_cast<int>(left) : 0);
  } while (ready < 0 && errno == EINTR);
  if (ready <= 0) return RPMA_E_NO_EVENT;
  ret = rpma_conn_next_event(conn, event);
  if (ret == 0 && EndsConnection(*event)) {
    std::lock_guard<std::mutex> lock(g_ended_mutex);
    g_ended->insert(conn);
  }
  return ret;
}

::testing::AssertionResult ConnEventIs(const char* conn_expr, const char*, rpma_conn* conn,
                                       rpma_conn_event event) {
  rpma_conn_event came = RPMA_CONN_UNDEFINED;
  int ret = NextConnEvent(conn, &came);
  if (ret == 0 && came == event) return ::testing::AssertionSuccess();
  ::testing::AssertionResult failure = ::testing::AssertionFailure();
  failure << "expected the event " << Name(event) << " on " << conn_expr << "\n  ";
  if (ret == RPMA_E_NO_EVENT)
    failure << "no event came within " << TimeoutMs() << " ms";
  else if (ret != 0)
    failure << "rpma_conn_next_event failed: " << rpma_err_2str(ret);
  else
    failure << "came instead: " << Name(came);
  return failure;
}

bool ConnectionEnded(const rpma_conn* conn) {
  std::lock_guard<std::mutex> lock(g_ended_mutex);
  return g_ended->count(conn) != 0;
}

void ForgetConnection(const rpma_conn* conn) {
  std::lock_guard<std::mutex> lock(g_ended_mutex);
  g_ended->erase(conn);
}

}  // namespace testing
}  // namespace rpma_sim
