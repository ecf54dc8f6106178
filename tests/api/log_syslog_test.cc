// Tests of the default log function's syslog side: when the library opens syslog.
//
// librpma opens syslog in its constructor, as the library loads (librpma_init ->
// rpma_log_init -> rpma_log_default_init: openlog("rpma", LOG_PID, LOG_LOCAL7)), that is
// before main. An application that then calls openlog() for itself keeps its own identity
// and facility for its own messages (and librpma's messages go out under it too).
//
// This binary records openlog()/syslog() calls (it defines them, so the library's calls
// reach these definitions instead of the C library's) and sends nothing to the system log.
#include <librpma.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <sys/socket.h>
#include <unistd.h>

#include <mutex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

extern "C" void openlog(const char* ident, int option, int facility);

namespace {

// <syslog.h>'s values (the header is not included: it may declare syslog as a fortified
// inline wrapper).
constexpr int kLogPid = 0x01;
constexpr int kLogUser = 1 << 3;
constexpr int kLogLocal7 = 23 << 3;

struct Call {
  std::string what;  // "openlog" or "syslog"
  std::string ident;
  int option;
  int facility;
  bool in_main;  // made after a test started (this binary makes no rpma call before)
};

std::mutex g_mutex;
std::vector<Call>& Calls() {
  static std::vector<Call>* calls = new std::vector<Call>;
  return *calls;
}
bool g_in_main = false;

void Record(Call call) {
  std::lock_guard<std::mutex> lock(g_mutex);
  call.in_main = g_in_main;
  Calls().push_back(call);
}

std::vector<Call> Snapshot() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return Calls();
}

std::string FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return std::to_string(ntohs(addr.sin_port));
}

// A NOTICE message of the library: rpma_ep_listen's "Waiting for incoming connection".
void MakeTheLibraryLogANotice() {
  ASSERT_EQ(0, rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_NOTICE));
  struct ibv_context* ctx = nullptr;
  ASSERT_EQ(0, rpma_utils_get_ibv_context("127.0.0.1", RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx));
  struct rpma_peer* peer = nullptr;
  ASSERT_EQ(0, rpma_peer_new(ctx, &peer));
  struct rpma_ep* ep = nullptr;
  std::string port = FreePort();
  ASSERT_EQ(0, rpma_ep_listen(peer, "127.0.0.1", port.c_str(), &ep));
  ASSERT_EQ(0, rpma_ep_shutdown(&ep));
  ASSERT_EQ(0, rpma_peer_delete(&peer));
  ASSERT_EQ(0, rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_WARNING));
}

// Every test marks that the program is running (the first one runs before any rpma call).
class Running : public ::testing::Environment {
 public:
  void SetUp() override {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_in_main = true;
  }
};
::testing::Environment* const g_running = ::testing::AddGlobalTestEnvironment(new Running);

// As librpma: syslog is opened as "rpma", LOG_PID, LOG_LOCAL7 when the library loads, before
// the program calls anything.
TEST(LogSyslogTest, OpenedAsTheLibraryLoads) {
  std::vector<Call> calls = Snapshot();
  bool opened_before_main = false;
  for (const Call& c : calls)
    if (c.what == "openlog" && !c.in_main && c.ident == "rpma" && c.option == kLogPid &&
        c.facility == kLogLocal7)
      opened_before_main = true;
  EXPECT_TRUE(opened_before_main) << calls.size() << " openlog/syslog calls before main";
}

// An application that opens syslog for itself keeps its identity and facility: the library
// does not call openlog() again when it first logs.
TEST(LogSyslogTest, ApplicationsOpenlogIsNotOverriddenByTheFirstMessage) {
  openlog("myapp", kLogPid, kLogUser);  // the application's own
  MakeTheLibraryLogANotice();
  std::vector<Call> calls = Snapshot();
  std::string last_ident;
  int syslog_calls = 0;
  for (const Call& c : calls) {
    if (c.what == "openlog") last_ident = c.ident;
    if (c.what == "syslog") ++syslog_calls;
  }
  EXPECT_GT(syslog_calls, 0) << "the NOTICE did not reach syslog";
  EXPECT_EQ("myapp", last_ident)
      << "the library reopened syslog after the application did: the application's own "
         "messages now go out as '"
      << last_ident << "'";
}

}  // namespace

extern "C" {

void openlog(const char* ident, int option, int facility) {
  Record(Call{"openlog", ident != nullptr ? ident : "", option, facility, false});
}

void closelog(void) {}

void vsyslog(int, const char*, va_list) { Record(Call{"syslog", "", 0, 0, false}); }

void syslog(int, const char*, ...) { Record(Call{"syslog", "", 0, 0, false}); }

void __syslog_chk(int, int, const char*, ...) { Record(Call{"syslog", "", 0, 0, false}); }

void __vsyslog_chk(int, int, const char*, va_list) { Record(Call{"syslog", "", 0, 0, false}); }

}  // extern "C"
