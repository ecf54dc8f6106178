// call_prologue_test.cc -- the seam every fallible public call passes through first
// (sim/common/call_seam.h, api/api_prologue.h): each of librpma's 82 functions that return an
// error code asks the installed gate by its own name before anything else and returns the
// error the gate gives, mapped to its librpma code, with no effect (a deleter still frees, as
// librpma's do whatever they return); a gate that lets the call through changes nothing. The list
// of functions is checked against librpma.h itself.
#include <gtest/gtest.h>
#include <librpma.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "sim/common/call_seam.h"

namespace {

using rpma_sim::Status;

// Returns `answer` for every call and remembers which functions asked.
class RecordingGate : public rpma_sim::CallGate {
 public:
  explicit RecordingGate(Status answer) : answer_(answer) {}

  Status Check(const char* function) override {
    std::lock_guard<std::mutex> lock(mutex_);
    asked_.push_back(function);
    return answer_;
  }

  std::vector<std::string> asked() {
    std::lock_guard<std::mutex> lock(mutex_);
    return asked_;
  }

 private:
  const Status answer_;
  std::mutex mutex_;
  std::vector<std::string> asked_;
};

struct Call {
  const char* name;
  int (*call)();
};

// Every int-returning function of librpma.h, called with null pointers and zeros (which the
// prologue never lets it look at when the gate fails the call).
#define CALL(fn, ...)                   \
  Call {                                \
#fn, [] { return fn(__VA_ARGS__); } \
  }

const std::vector<Call>& AllCalls() {
  static const std::vector<Call> calls = {
      CALL(rpma_utils_get_ibv_context, nullptr, static_cast<enum rpma_util_ibv_context_type>(0),
           nullptr),
      CALL(rpma_utils_ibv_context_is_odp_capable, nullptr, nullptr),
      CALL(rpma_peer_cfg_new, nullptr),
      CALL(rpma_peer_cfg_delete, nullptr),
      CALL(rpma_peer_cfg_set_direct_write_to_pmem, nullptr, 0),
      CALL(rpma_peer_cfg_get_direct_write_to_pmem, nullptr, nullptr),
      CALL(rpma_peer_cfg_get_descriptor, nullptr, nullptr),
      CALL(rpma_peer_cfg_get_descriptor_size, nullptr, nullptr),
      CALL(rpma_peer_cfg_from_descriptor, nullptr, 0, nullptr),
      CALL(rpma_peer_new, nullptr, nullptr),
      CALL(rpma_peer_delete, nullptr),
      CALL(rpma_mr_reg, nullptr, nullptr, 0, 0, nullptr),
      CALL(rpma_mr_dereg, nullptr),
      CALL(rpma_mr_get_descriptor, nullptr, nullptr),
      CALL(rpma_mr_remote_from_descriptor, nullptr, 0, nullptr),
      CALL(rpma_mr_get_descriptor_size, nullptr, nullptr),
      CALL(rpma_mr_get_ptr, nullptr, nullptr),
      CALL(rpma_mr_get_size, nullptr, nullptr),
      CALL(rpma_mr_remote_get_size, nullptr, nullptr),
      CALL(rpma_mr_remote_get_flush_type, nullptr, nullptr),
      CALL(rpma_mr_remote_delete, nullptr),
      CALL(rpma_mr_advise, nullptr, 0, 0, 0, 0),
      CALL(rpma_conn_cfg_new, nullptr),
      CALL(rpma_conn_cfg_delete, nullptr),
      CALL(rpma_conn_cfg_set_timeout, nullptr, 0),
      CALL(rpma_conn_cfg_get_timeout, nullptr, nullptr),
      CALL(rpma_conn_cfg_set_cq_size, nullptr, 0),
      CALL(rpma_conn_cfg_get_compl_channel, nullptr, nullptr),
      CALL(rpma_conn_cfg_set_compl_channel, nullptr, 0),
      CALL(rpma_conn_cfg_get_cq_size, nullptr, nullptr),
      CALL(rpma_conn_cfg_set_rcq_size, nullptr, 0),
      CALL(rpma_conn_cfg_get_rcq_size, nullptr, nullptr),
      CALL(rpma_conn_cfg_set_sq_size, nullptr, 0),
      CALL(rpma_conn_cfg_get_sq_size, nullptr, nullptr),
      CALL(rpma_conn_cfg_set_rq_size, nullptr, 0),
      CALL(rpma_conn_cfg_get_rq_size, nullptr, nullptr),
      CALL(rpma_conn_cfg_set_srq, nullptr, nullptr),
      CALL(rpma_conn_cfg_get_srq, nullptr, nullptr),
      CALL(rpma_conn_get_event_fd, nullptr, nullptr),
      CALL(rpma_conn_next_event, nullptr, nullptr),
      CALL(rpma_conn_get_private_data, nullptr, nullptr),
      CALL(rpma_conn_apply_remote_peer_cfg, nullptr, nullptr),
      CALL(rpma_conn_get_qp_num, nullptr, nullptr),
      CALL(rpma_conn_get_cq, nullptr, nullptr),
      CALL(rpma_conn_get_rcq, nullptr, nullptr),
      CALL(rpma_conn_disconnect, nullptr),
      CALL(rpma_conn_delete, nullptr),
      CALL(rpma_conn_req_new, nullptr, nullptr, nullptr, nullptr, nullptr),
      CALL(rpma_conn_req_delete, nullptr),
      CALL(rpma_conn_req_connect, nullptr, nullptr, nullptr),
      CALL(rpma_conn_get_compl_fd, nullptr, nullptr),
      CALL(rpma_conn_wait, nullptr, 0, nullptr, nullptr),
      CALL(rpma_conn_req_recv, nullptr, nullptr, 0, 0, nullptr),
      CALL(rpma_ep_listen, nullptr, nullptr, nullptr, nullptr),
      CALL(rpma_ep_shutdown, nullptr),
      CALL(rpma_ep_get_fd, nullptr, nullptr),
      CALL(rpma_ep_next_conn_req, nullptr, nullptr, nullptr),
      CALL(rpma_conn_req_get_private_data, nullptr, nullptr),
      CALL(rpma_srq_cfg_new, nullptr),
      CALL(rpma_srq_cfg_delete, nullptr),
      CALL(rpma_srq_cfg_set_rq_size, nullptr, 0),
      CALL(rpma_srq_cfg_get_rq_size, nullptr, nullptr),
      CALL(rpma_srq_cfg_set_rcq_size, nullptr, 0),
      CALL(rpma_srq_cfg_get_rcq_size, nullptr, nullptr),
      CALL(rpma_srq_new, nullptr, nullptr, nullptr),
      CALL(rpma_srq_delete, nullptr),
      CALL(rpma_srq_recv, nullptr, nullptr, 0, 0, nullptr),
      CALL(rpma_srq_get_rcq, nullptr, nullptr),
      CALL(rpma_read, nullptr, nullptr, 0, nullptr, 0, 0, 0, nullptr),
      CALL(rpma_write, nullptr, nullptr, 0, nullptr, 0, 0, 0, nullptr),
      CALL(rpma_write_with_imm, nullptr, nullptr, 0, nullptr, 0, 0, 0, 0, nullptr),
      CALL(rpma_atomic_write, nullptr, nullptr, 0, 0, 0, nullptr),
      CALL(rpma_flush, nullptr, nullptr, 0, 0, static_cast<enum rpma_flush_type>(0), 0, nullptr),
      CALL(rpma_send, nullptr, nullptr, 0, 0, 0, nullptr),
      CALL(rpma_send_with_imm, nullptr, nullptr, 0, 0, 0, 0, nullptr),
      CALL(rpma_recv, nullptr, nullptr, 0, 0, nullptr),
      CALL(rpma_cq_get_fd, nullptr, nullptr),
      CALL(rpma_cq_wait, nullptr),
      CALL(rpma_cq_get_wc, nullptr, 0, nullptr, nullptr),
      CALL(rpma_log_set_threshold, static_cast<enum rpma_log_threshold>(0),
           static_cast<enum rpma_log_level>(0)),
      CALL(rpma_log_get_threshold, static_cast<enum rpma_log_threshold>(0), nullptr),
      CALL(rpma_log_set_function, nullptr),
  };
  return calls;
}

// The int-returning functions librpma.h declares, read from the header itself.
std::set<std::string> DeclaredFallibleFunctions() {
  const char* srcdir = getenv("TEST_SRCDIR");
  std::string path = std::string(srcdir ? srcdir : ".") + "/rpma_sim/api/include/librpma.h";
  std::ifstream header(path);
  EXPECT_TRUE(header.good()) << path;
  std::stringstream text;
  text << header.rdbuf();
  std::string all = text.str();
  std::set<std::string> names;
  std::regex prototype(R"((^|\n)int\s+(rpma_\w+)\()");
  for (auto it = std::sregex_iterator(all.begin(), all.end(), prototype);
       it != std::sregex_iterator(); ++it)
    names.insert((*it)[2]);
  return names;
}

class CallPrologueTest : public ::testing::Test {
 protected:
  void TearDown() override { rpma_sim::SetCallGate(nullptr); }
};

TEST_F(CallPrologueTest, TheTableIsEveryFallibleFunctionOfTheHeader) {
  std::set<std::string> tabled;
  for (const Call& call : AllCalls()) tabled.insert(call.name);
  EXPECT_EQ(82u, AllCalls().size());
  EXPECT_EQ(DeclaredFallibleFunctions(), tabled);
}

// Every function returns the gate's error, mapped to librpma's code, and asked by its name.
TEST_F(CallPrologueTest, EveryFunctionReturnsTheGatesError) {
  const std::map<Status, int> codes = {
      {Status::kInvalid, RPMA_E_INVAL},
      {Status::kNoMemory, RPMA_E_NOMEM},
      {Status::kProvider, RPMA_E_PROVIDER},
      {Status::kNotSupported, RPMA_E_NOSUPP},
      {Status::kNoEvent, RPMA_E_NO_EVENT},
      {Status::kNoCompletion, RPMA_E_NO_COMPLETION},
      {Status::kUnknown, RPMA_E_UNKNOWN},
      {Status::kAgain, RPMA_E_AGAIN},
      {Status::kSharedChannel, RPMA_E_SHARED_CHANNEL},
      {Status::kNotSharedChannel, RPMA_E_NOT_SHARED_CHNL},
  };
  for (const auto& status_code : codes) {
    auto gate = std::make_shared<RecordingGate>(status_code.first);
    rpma_sim::SetCallGate(gate);
    std::vector<std::string> expected;
    for (const Call& call : AllCalls()) {
      EXPECT_EQ(status_code.second, call.call()) << call.name;
      expected.push_back(call.name);
    }
    EXPECT_EQ(expected, gate->asked());
  }
}

// A gate that lets calls through: each function then does what it always does (here: its
// own argument check), having asked once.
TEST_F(CallPrologueTest, AGateThatLetsCallsThroughChangesNothing) {
  auto gate = std::make_shared<RecordingGate>(Status::kOk);
  rpma_sim::SetCallGate(gate);
  rpma_mr_local* mr = nullptr;
  EXPECT_EQ(RPMA_E_INVAL, rpma_mr_reg(nullptr, nullptr, 0, 0, &mr));
  rpma_peer_cfg* cfg = nullptr;
  ASSERT_EQ(0, rpma_peer_cfg_new(&cfg));
  EXPECT_EQ(0, rpma_peer_cfg_delete(&cfg));
  EXPECT_EQ((std::vector<std::string>{"rpma_mr_reg", "rpma_peer_cfg_new", "rpma_peer_cfg_delete"}),
            gate->asked());
}

// A call the gate fails leaves everything as it was; with the gate removed calls run again.
TEST_F(CallPrologueTest, FailedCallHasNoEffect) {
  rpma_peer_cfg* cfg = nullptr;
  rpma_sim::SetCallGate(std::make_shared<RecordingGate>(Status::kNoMemory));
  EXPECT_EQ(RPMA_E_NOMEM, rpma_peer_cfg_new(&cfg));
  EXPECT_EQ(nullptr, cfg);
  rpma_sim::SetCallGate(nullptr);
  ASSERT_EQ(0, rpma_peer_cfg_new(&cfg));
  rpma_sim::SetCallGate(std::make_shared<RecordingGate>(Status::kNoMemory));
  EXPECT_EQ(RPMA_E_NOMEM, rpma_peer_cfg_set_direct_write_to_pmem(cfg, true));
  rpma_sim::SetCallGate(nullptr);
  bool supported = true;
  EXPECT_EQ(0, rpma_peer_cfg_get_direct_write_to_pmem(cfg, &supported));
  EXPECT_FALSE(supported);  // the failed call did nothing
  EXPECT_EQ(0, rpma_peer_cfg_delete(&cfg));
  EXPECT_EQ(nullptr, cfg);
}

// A deleter ends its object whatever it returns, as librpma's do: one the gate fails frees it
// too (or a program correct under librpma would leak it), asking the gate once (its own work
// is no call of the application's).
TEST_F(CallPrologueTest, AFailedDeleterStillFrees) {
  rpma_peer_cfg* cfg = nullptr;
  ASSERT_EQ(0, rpma_peer_cfg_new(&cfg));
  auto gate = std::make_shared<RecordingGate>(Status::kNoMemory);
  rpma_sim::SetCallGate(gate);
  EXPECT_EQ(RPMA_E_NOMEM, rpma_peer_cfg_delete(&cfg));
  EXPECT_EQ(nullptr, cfg);
  EXPECT_EQ((std::vector<std::string>{"rpma_peer_cfg_delete"}), gate->asked());
}

}  // namespace
