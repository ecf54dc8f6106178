// persistence_test.cc -- the persistence model: what a completed flush makes durable on each
// device configuration, what a power failure reverts (all, words, lines, none), the target
// CPU's own persists, the report of what was never made durable, the power_failure rule, and
// the exact codes of rpma_sim_power_failure{,_arm}, rpma_sim_persist and
// rpma_sim_persistence_report. Like every API test, it runs in process and again over tcp
// and over shm.
#include <librpma.h>
#include <rpma_sim.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/common/kept_log.h"
#include "tests/common/test_support.h"

namespace {

constexpr size_t kSize = 8192;
constexpr uint8_t kOld = 0x11;  // what the server's memory holds before the writes
constexpr uint8_t kNew = 0xEE;  // what the client writes

constexpr int kTargetUsage = RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC |
                             RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT |
                             RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY | RPMA_MR_USAGE_RECV;

// Sets a device capability for the scope and puts the old value back at the end.
class CapValue {
 public:
  CapValue(rpma_sim_device_cap cap, bool value) : cap_(cap) {
    EXPECT_EQ(0, rpma_sim_get_device_cap(cap_, &old_));
    EXPECT_EQ(0, rpma_sim_set_device_cap(cap_, value));
  }
  ~CapValue() { EXPECT_EQ(0, rpma_sim_set_device_cap(cap_, old_)); }

 private:
  rpma_sim_device_cap cap_;
  bool old_ = false;
};

class PersistenceTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (client_ != nullptr) EXPECT_EQ(0, rpma_conn_delete(&client_));
    if (server_ != nullptr) EXPECT_EQ(0, rpma_conn_delete(&server_));
    regs_.Release();
    if (ep_ != nullptr) EXPECT_EQ(0, rpma_ep_shutdown(&ep_));
    for (rpma_peer* peer : {client_peer_, server_peer_})
      if (peer != nullptr) EXPECT_EQ(0, rpma_peer_delete(&peer));
    rpma_log_set_function(RPMA_LOG_USE_DEFAULT_FUNCTION);
    EXPECT_EQ(0, rpma_sim_fault_clear());
  }

  // Two peers (made after the test set the device's capabilities), a connection between
  // them, the server's target memory (kSize bytes of kOld) and the client's source (kNew),
  // the client applying direct write to pmem as example 05 does.
  void Connect(bool arm = true) {
    ASSERT_NO_FATAL_FAILURE(NewLocalPeer(&server_peer_));
    ASSERT_NO_FATAL_FAILURE(NewLocalPeer(&client_peer_));
    if (arm) ASSERT_EQ(0, rpma_sim_power_failure_arm(server_peer_));
    port_ = FreeTcpPort();
    ASSERT_EQ(0, rpma_ep_listen(server_peer_, kLoopback, port_.c_str(), &ep_));
    ASSERT_NO_FATAL_FAILURE(
        ConnectOnce(client_peer_, ep_, port_, PairOptions(), &client_, &server_));
    target_ = regs_.NewBuffer(server_peer_, kSize, kTargetUsage, kOld);
    source_ =
        regs_.NewBuffer(client_peer_, kSize, RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_SEND, kNew);
    remote_ = regs_.RemoteOf(target_);
    ASSERT_NE(nullptr, remote_);
    ASSERT_NO_FATAL_FAILURE(ApplyDirectWrite());
  }

  void ApplyDirectWrite() {
    rpma_peer_cfg* pcfg = nullptr;
    ASSERT_EQ(0, rpma_peer_cfg_new(&pcfg));
    ASSERT_EQ(0, rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true));
    ASSERT_EQ(0, rpma_conn_apply_remote_peer_cfg(client_, pcfg));
    ASSERT_EQ(0, rpma_peer_cfg_delete(&pcfg));
  }

  void Write(size_t offset, size_t len, uintptr_t id) {
    ASSERT_EQ(0, rpma_write(client_, remote_, offset, source_->mr, offset, len,
                            RPMA_F_COMPLETION_ALWAYS, Ctx(id)));
    ASSERT_NO_FATAL_FAILURE(ExpectCompletion(MainCq(client_), id, IBV_WC_RDMA_WRITE));
  }

  void Flush(size_t offset, size_t len, rpma_flush_type type, uintptr_t id) {
    ASSERT_EQ(0,
              rpma_flush(client_, remote_, offset, len, type, RPMA_F_COMPLETION_ALWAYS, Ctx(id)));
    bool native = false;
    ASSERT_EQ(0, rpma_sim_get_device_cap(RPMA_SIM_CAP_NATIVE_FLUSH, &native));
    ASSERT_NO_FATAL_FAILURE(
        ExpectCompletion(MainCq(client_), id, native ? IBV_WC_FLUSH : IBV_WC_RDMA_READ));
  }

  // The server's node loses power: both sides see the connection lost.
  void PowerFailure(rpma_sim_loss mode) {
    ASSERT_EQ(0, rpma_sim_power_failure(server_peer_, mode));
    ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(server_, RPMA_CONN_LOST));
    ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(client_, RPMA_CONN_LOST));
  }

  // Writes 64 bytes at 0 and at 4096, then flushes `flush_len` bytes at 0 to persistence.
  void WriteTwoFlushFirst(size_t flush_len) {
    ASSERT_NO_FATAL_FAILURE(Write(0, 64, 1));
    ASSERT_NO_FATAL_FAILURE(Write(4096, 64, 2));
    ASSERT_NO_FATAL_FAILURE(Flush(0, flush_len, RPMA_FLUSH_TYPE_PERSISTENT, 3));
  }

  // A second registration of the server's target memory (librpma allows it: a second region
  // over the same bytes, for a part or another usage), as the client sees it.
  void RegisterTargetAgain(rpma_mr_remote** remote) {
    rpma_mr_local* alias = nullptr;
    ASSERT_NO_FATAL_FAILURE(
        regs_.Register(server_peer_, target_->bytes.data(), kSize, kTargetUsage, &alias));
    ASSERT_NO_FATAL_FAILURE(regs_.RemoteOf(alias, remote));
  }

  // How many bytes of target[offset, offset + len) hold `value`.
  size_t Count(size_t offset, size_t len, uint8_t value) const {
    size_t n = 0;
    for (size_t i = offset; i < offset + len; ++i) n += target_->bytes[i] == value;
    return n;
  }

  rpma_peer* server_peer_ = nullptr;
  rpma_peer* client_peer_ = nullptr;
  rpma_ep* ep_ = nullptr;
  std::string port_;
  rpma_conn* client_ = nullptr;
  rpma_conn* server_ = nullptr;
  Registrations regs_;
  Buffer* target_ = nullptr;
  Buffer* source_ = nullptr;
  rpma_mr_remote* remote_ = nullptr;
};

// --- error codes ------------------------------------------------------------------------------

TEST(PersistenceArgsTest, NullPeerIsInval) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_sim_power_failure(nullptr, RPMA_SIM_LOSS_ALL));
  EXPECT_EQ(RPMA_E_INVAL, rpma_sim_power_failure_arm(nullptr));
}

TEST(PersistenceArgsTest, UnknownLossModeIsInval) {
  rpma_peer* peer = nullptr;
  ASSERT_NO_FATAL_FAILURE(NewLocalPeer(&peer));
  EXPECT_EQ(RPMA_E_INVAL, rpma_sim_power_failure(peer, static_cast<rpma_sim_loss>(4)));
  EXPECT_EQ(RPMA_E_INVAL, rpma_sim_power_failure(peer, static_cast<rpma_sim_loss>(-1)));
  EXPECT_EQ(0, rpma_peer_delete(&peer));
}

TEST(PersistenceArgsTest, PersistOfNullOrNothingIsInval) {
  uint8_t byte = 0;
  EXPECT_EQ(RPMA_E_INVAL, rpma_sim_persist(nullptr, 8));
  EXPECT_EQ(RPMA_E_INVAL, rpma_sim_persist(&byte, 0));
  EXPECT_EQ(0, rpma_sim_persist(&byte, 1));  // not registered: nothing to do
}

TEST(PersistenceArgsTest, NewCapsReadBack) {
  for (rpma_sim_device_cap cap : {RPMA_SIM_CAP_EADR, RPMA_SIM_CAP_FLUSH_SCOPE_QP}) {
    bool enabled = true;
    EXPECT_EQ(0, rpma_sim_get_device_cap(cap, &enabled));
    EXPECT_FALSE(enabled);
    CapValue on(cap, true);
    EXPECT_EQ(0, rpma_sim_get_device_cap(cap, &enabled));
    EXPECT_TRUE(enabled);
  }
}

// An unarmed node kept no earlier values: a power failure that would revert is refused and
// does nothing; one that reverts nothing still loses the connections.
TEST_F(PersistenceTest, UnarmedNodeRefusesToRevert) {
  ASSERT_NO_FATAL_FAILURE(Connect(/*arm=*/false));
  ASSERT_NO_FATAL_FAILURE(Write(0, 64, 1));
  EXPECT_EQ(RPMA_E_INVAL, rpma_sim_power_failure(server_peer_, RPMA_SIM_LOSS_ALL));
  ExpectNoPendingEvent(client_);
  EXPECT_EQ(64u, Count(0, 64, kNew));
  ASSERT_NO_FATAL_FAILURE(PowerFailure(RPMA_SIM_LOSS_NONE));
  EXPECT_EQ(64u, Count(0, 64, kNew));
}

// --- what survives ----------------------------------------------------------------------------

TEST_F(PersistenceTest, UnflushedWriteIsLost) {
  ASSERT_NO_FATAL_FAILURE(Connect());
  ASSERT_NO_FATAL_FAILURE(Write(0, 100, 1));
  EXPECT_EQ(100u, Count(0, 100, kNew));
  ASSERT_NO_FATAL_FAILURE(PowerFailure(RPMA_SIM_LOSS_ALL));
  EXPECT_EQ(kSize, Count(0, kSize, kOld));
}

TEST_F(PersistenceTest, PersistentFlushKeepsExactlyItsRange) {
  ASSERT_NO_FATAL_FAILURE(Connect());
  ASSERT_NO_FATAL_FAILURE(Write(0, 4096, 1));
  ASSERT_NO_FATAL_FAILURE(Flush(1000, 2000, RPMA_FLUSH_TYPE_PERSISTENT, 2));
  ASSERT_NO_FATAL_FAILURE(PowerFailure(RPMA_SIM_LOSS_ALL));
  EXPECT_EQ(1000u, Count(0, 1000, kOld));
  EXPECT_EQ(2000u, Count(1000, 2000, kNew));
  EXPECT_EQ(1096u, Count(3000, 1096, kOld));
}

TEST_F(PersistenceTest, VisibilityFlushMakesNothingDurable) {
  ASSERT_NO_FATAL_FAILURE(Connect());
  ASSERT_NO_FATAL_FAILURE(Write(0, 256, 1));
  ASSERT_NO_FATAL_FAILURE(Flush(0, 256, RPMA_FLUSH_TYPE_VISIBILITY, 2));
  ASSERT_NO_FATAL_FAILURE(PowerFailure(RPMA_SIM_LOSS_ALL));
  EXPECT_EQ(256u, Count(0, 256, kOld));
}

TEST_F(PersistenceTest, EadrMakesVisibilityFlushDurable) {
  CapValue eadr(RPMA_SIM_CAP_EADR, true);
  ASSERT_NO_FATAL_FAILURE(Connect());
  ASSERT_NO_FATAL_FAILURE(Write(0, 256, 1));
  ASSERT_NO_FATAL_FAILURE(Write(512, 256, 2));
  ASSERT_NO_FATAL_FAILURE(Flush(0, 256, RPMA_FLUSH_TYPE_VISIBILITY, 3));
  ASSERT_NO_FATAL_FAILURE(PowerFailure(RPMA_SIM_LOSS_ALL));
  EXPECT_EQ(256u, Count(0, 256, kNew));
  EXPECT_EQ(256u, Count(512, 256, kOld));  // never flushed
}

TEST_F(PersistenceTest, DramKeepsNothingWhateverWasFlushed) {
  CapValue dram(RPMA_SIM_CAP_PERSISTENT_MEMORY, false);
  ASSERT_NO_FATAL_FAILURE(Connect());
  ASSERT_NO_FATAL_FAILURE(Write(0, 256, 1));
  ASSERT_NO_FATAL_FAILURE(Flush(0, 256, RPMA_FLUSH_TYPE_PERSISTENT, 2));
  ASSERT_NO_FATAL_FAILURE(PowerFailure(RPMA_SIM_LOSS_ALL));
  EXPECT_EQ(256u, Count(0, 256, kOld));
}

// librpma's portable flush is a read; on some platforms it drains every earlier write of
// its queue pair (RPMA_SIM_FLUSH_SCOPE=qp), not only the range it names.
TEST_F(PersistenceTest, FlushScopeQpMakesEveryEarlierWriteDurable) {
  CapValue scope(RPMA_SIM_CAP_FLUSH_SCOPE_QP, true);
  ASSERT_NO_FATAL_FAILURE(Connect());
  ASSERT_NO_FATAL_FAILURE(WriteTwoFlushFirst(8));
  ASSERT_NO_FATAL_FAILURE(Write(6000, 64, 4));  // after the flush: not covered
  ASSERT_NO_FATAL_FAILURE(PowerFailure(RPMA_SIM_LOSS_ALL));
  EXPECT_EQ(64u, Count(0, 64, kNew));
  EXPECT_EQ(64u, Count(4096, 64, kNew));
  EXPECT_EQ(64u, Count(6000, 64, kOld));
}

// The same without the scope: only the range named.
TEST_F(PersistenceTest, FlushScopeRangeIsTheDefault) {
  ASSERT_NO_FATAL_FAILURE(Connect());
  ASSERT_NO_FATAL_FAILURE(WriteTwoFlushFirst(8));
  ASSERT_NO_FATAL_FAILURE(PowerFailure(RPMA_SIM_LOSS_ALL));
  EXPECT_EQ(8u, Count(0, 8, kNew));
  EXPECT_EQ(56u, Count(8, 56, kOld));
  EXPECT_EQ(64u, Count(4096, 64, kOld));
}

// A native flush (IBV_WR_FLUSH) names its range, whatever the portable flush's scope.
TEST_F(PersistenceTest, NativeFlushIsAlwaysItsRange) {
  CapValue scope(RPMA_SIM_CAP_FLUSH_SCOPE_QP, true);
  CapValue native(RPMA_SIM_CAP_NATIVE_FLUSH, true);
  ASSERT_NO_FATAL_FAILURE(Connect());
  ASSERT_NO_FATAL_FAILURE(WriteTwoFlushFirst(64));
  ASSERT_NO_FATAL_FAILURE(PowerFailure(RPMA_SIM_LOSS_ALL));
  EXPECT_EQ(64u, Count(0, 64, kNew));
  EXPECT_EQ(64u, Count(4096, 64, kOld));
}

TEST_F(PersistenceTest, TargetCpuPersistMakesDurable) {
  ASSERT_NO_FATAL_FAILURE(Connect());
  ASSERT_NO_FATAL_FAILURE(Write(0, 128, 1));
  ASSERT_EQ(0, rpma_sim_persist(target_->bytes.data() + 64, 64));
  ASSERT_NO_FATAL_FAILURE(PowerFailure(RPMA_SIM_LOSS_ALL));
  EXPECT_EQ(64u, Count(0, 64, kOld));
  EXPECT_EQ(64u, Count(64, 64, kNew));
}

// A second write over bytes already placed keeps the value from before the first.
TEST_F(PersistenceTest, RevertsToTheLastDurableValue) {
  ASSERT_NO_FATAL_FAILURE(Connect());
  ASSERT_NO_FATAL_FAILURE(Write(0, 64, 1));
  memset(source_->bytes.data(), 0x77, 64);
  ASSERT_NO_FATAL_FAILURE(Write(32, 64, 2));
  ASSERT_NO_FATAL_FAILURE(PowerFailure(RPMA_SIM_LOSS_ALL));
  EXPECT_EQ(96u, Count(0, 96, kOld));
}

TEST_F(PersistenceTest, LossNoneKeepsEverything) {
  ASSERT_NO_FATAL_FAILURE(Connect());
  ASSERT_NO_FATAL_FAILURE(Write(0, 512, 1));
  ASSERT_NO_FATAL_FAILURE(PowerFailure(RPMA_SIM_LOSS_NONE));
  EXPECT_EQ(512u, Count(0, 512, kNew));
}

// Torn: each aligned word (or line) reverts whole or not at all, some do and some do not.
void ExpectTorn(const std::vector<uint8_t>& bytes, size_t len, size_t unit) {
  const uintptr_t base = reinterpret_cast<uintptr_t>(bytes.data());
  size_t reverted_units = 0, kept_units = 0;
  for (uintptr_t at = base & ~(unit - 1); at < base + len; at += unit) {
    size_t from = at < base ? 0 : at - base;
    size_t to = std::min<size_t>(at + unit - base, len);
    size_t old = 0;
    for (size_t i = from; i < to; ++i) old += bytes[i] == kOld;
    EXPECT_TRUE(old == 0 || old == to - from) << "unit at offset " << from << " is torn";
    (old ? reverted_units : kept_units) += 1;
  }
  EXPECT_GT(reverted_units, 0u);
  EXPECT_GT(kept_units, 0u);
}

TEST_F(PersistenceTest, LossWordsRevertsWholeWords) {
  ASSERT_NO_FATAL_FAILURE(Connect());
  ASSERT_NO_FATAL_FAILURE(Write(0, 4096, 1));
  ASSERT_NO_FATAL_FAILURE(PowerFailure(RPMA_SIM_LOSS_WORDS));
  ExpectTorn(target_->bytes, 4096, 8);
  EXPECT_EQ(kSize - 4096, Count(4096, kSize - 4096, kOld));
}

TEST_F(PersistenceTest, LossLinesRevertsWholeLines) {
  ASSERT_NO_FATAL_FAILURE(Connect());
  ASSERT_NO_FATAL_FAILURE(Write(0, 4096, 1));
  ASSERT_NO_FATAL_FAILURE(PowerFailure(RPMA_SIM_LOSS_LINES));
  ExpectTorn(target_->bytes, 4096, 64);
}

// A region that does not start on a line boundary: its first, partial line reverts like any
// other (drawn; it must revert in some of 32 power failures: all 32 draws keep it with
// probability 2^-32).
TEST_F(PersistenceTest, LossLinesCoversAPartialFirstLine) {
  ASSERT_NO_FATAL_FAILURE(Connect());
  alignas(64) static uint8_t memory[256];
  uint8_t* region = memory + 8;  // the first line holds 56 of its bytes
  rpma_mr_local* mr = nullptr;
  ASSERT_NO_FATAL_FAILURE(regs_.Register(server_peer_, region, 128, kTargetUsage, &mr));
  rpma_mr_remote* remote = nullptr;
  ASSERT_NO_FATAL_FAILURE(regs_.RemoteOf(mr, &remote));
  bool reverted = false;
  for (int round = 0; round < 32 && !reverted; ++round) {
    memset(region, kOld, 128);
    ASSERT_EQ(
        0, rpma_write(client_, remote, 0, source_->mr, 0, 128, RPMA_F_COMPLETION_ALWAYS, Ctx(1)));
    ASSERT_NO_FATAL_FAILURE(ExpectCompletion(MainCq(client_), 1, IBV_WC_RDMA_WRITE));
    ASSERT_NO_FATAL_FAILURE(PowerFailure(RPMA_SIM_LOSS_LINES));
    size_t old = 0;
    for (size_t i = 0; i < 56; ++i) old += region[i] == kOld;
    ASSERT_TRUE(old == 0 || old == 56) << "the partial line is torn";
    reverted = old == 56;
    EXPECT_EQ(0, rpma_conn_delete(&client_));
    EXPECT_EQ(0, rpma_conn_delete(&server_));
    ASSERT_NO_FATAL_FAILURE(
        ConnectOnce(client_peer_, ep_, port_, PairOptions(), &client_, &server_));
  }
  EXPECT_TRUE(reverted) << "the first, partial line never reverted";
}

TEST_F(PersistenceTest, AtomicWriteRevertsWhole) {
  ASSERT_NO_FATAL_FAILURE(Connect());
  for (int i = 0; i < 64; ++i) {
    char value[8];
    memset(value, kNew, sizeof(value));
    ASSERT_EQ(
        0, rpma_atomic_write(client_, remote_, 8 * i, value, RPMA_F_COMPLETION_ALWAYS, Ctx(i + 1)));
    ASSERT_NO_FATAL_FAILURE(ExpectCompletion(MainCq(client_), i + 1, IBV_WC_RDMA_WRITE));
  }
  ASSERT_NO_FATAL_FAILURE(PowerFailure(RPMA_SIM_LOSS_WORDS));
  for (int i = 0; i < 64; ++i) {
    size_t old = Count(8 * i, 8, kOld);
    EXPECT_TRUE(old == 0 || old == 8) << "atomic write " << i << " is torn";
  }
}

// A send lands in a receive buffer; that is placed memory too.
TEST_F(PersistenceTest, ReceivedMessageIsRevertedToo) {
  ASSERT_NO_FATAL_FAILURE(Connect());
  ASSERT_EQ(0, rpma_recv(server_, target_->mr, 0, 64, Ctx(1)));
  ASSERT_EQ(0, rpma_send(client_, source_->mr, 0, 64, RPMA_F_COMPLETION_ALWAYS, Ctx(2)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(MainCq(server_), 1, IBV_WC_RECV));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(MainCq(client_), 2, IBV_WC_SEND));
  EXPECT_EQ(64u, Count(0, 64, kNew));
  ASSERT_NO_FATAL_FAILURE(PowerFailure(RPMA_SIM_LOSS_ALL));
  EXPECT_EQ(64u, Count(0, 64, kOld));
}

// After a power failure everything counts as durable, and the node works on: a new
// connection's writes are tracked from scratch.
TEST_F(PersistenceTest, NodeWorksAfterPowerFailure) {
  ASSERT_NO_FATAL_FAILURE(Connect());
  ASSERT_NO_FATAL_FAILURE(Write(0, 64, 1));
  ASSERT_NO_FATAL_FAILURE(PowerFailure(RPMA_SIM_LOSS_ALL));
  EXPECT_EQ(0, rpma_conn_delete(&client_));
  EXPECT_EQ(0, rpma_conn_delete(&server_));
  ASSERT_NO_FATAL_FAILURE(ConnectOnce(client_peer_, ep_, port_, PairOptions(), &client_, &server_));
  ASSERT_NO_FATAL_FAILURE(ApplyDirectWrite());
  ASSERT_NO_FATAL_FAILURE(Write(128, 64, 2));
  ASSERT_NO_FATAL_FAILURE(Flush(128, 64, RPMA_FLUSH_TYPE_PERSISTENT, 3));
  ASSERT_NO_FATAL_FAILURE(Write(256, 64, 4));
  ASSERT_NO_FATAL_FAILURE(PowerFailure(RPMA_SIM_LOSS_ALL));
  EXPECT_EQ(64u, Count(128, 64, kNew));
  EXPECT_EQ(64u, Count(256, 64, kOld));
}

// The server registers its memory twice, and the client flushes through the second region
// what it wrote through the first. A flush drains bytes, not a key (a native flush of the range, or
// the read that drains the queue pair's writes), so the write is durable.
TEST_F(PersistenceTest, AFlushThroughAnotherRegionOfTheSameBytesMakesThemDurable) {
  ASSERT_NO_FATAL_FAILURE(Connect());
  rpma_mr_remote* alias_remote = nullptr;
  ASSERT_NO_FATAL_FAILURE(RegisterTargetAgain(&alias_remote));
  ASSERT_NO_FATAL_FAILURE(Write(0, 64, 1));
  ASSERT_NO_FATAL_FAILURE(Write(128, 64, 2));  // not flushed: it reverts
  ASSERT_EQ(0, rpma_flush(client_, alias_remote, 0, 64, RPMA_FLUSH_TYPE_PERSISTENT,
                          RPMA_F_COMPLETION_ALWAYS, Ctx(3)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(MainCq(client_), 3, IBV_WC_RDMA_READ));
  ASSERT_NO_FATAL_FAILURE(PowerFailure(RPMA_SIM_LOSS_ALL));
  EXPECT_EQ(64u, Count(0, 64, kNew)) << "a completed persistent flush of the bytes was lost";
  EXPECT_EQ(64u, Count(128, 64, kOld));
}

// Writes through two registrations of the same bytes, none flushed, over each other in both
// orders: a power failure puts back the durable value, whichever region wrote last.
TEST_F(PersistenceTest, UnflushedWritesThroughTwoRegionsOfTheSameBytesRevert) {
  ASSERT_NO_FATAL_FAILURE(Connect());
  rpma_mr_remote* alias_remote = nullptr;
  ASSERT_NO_FATAL_FAILURE(RegisterTargetAgain(&alias_remote));
  auto write = [&](rpma_mr_remote* dst, size_t offset, uintptr_t id) {
    ASSERT_EQ(0, rpma_write(client_, dst, offset, source_->mr, offset, 64, RPMA_F_COMPLETION_ALWAYS,
                            Ctx(id)));
    ASSERT_NO_FATAL_FAILURE(ExpectCompletion(MainCq(client_), id, IBV_WC_RDMA_WRITE));
  };
  ASSERT_NO_FATAL_FAILURE(write(remote_, 0, 1));         // through the first registration
  ASSERT_NO_FATAL_FAILURE(write(alias_remote, 64, 2));   // the second, other bytes
  ASSERT_NO_FATAL_FAILURE(write(remote_, 64, 3));        // the first, over the second's
  ASSERT_NO_FATAL_FAILURE(write(alias_remote, 128, 4));  // and the other way round
  ASSERT_NO_FATAL_FAILURE(write(remote_, 192, 5));
  ASSERT_NO_FATAL_FAILURE(write(alias_remote, 192, 6));
  ASSERT_NO_FATAL_FAILURE(PowerFailure(RPMA_SIM_LOSS_ALL));
  EXPECT_EQ(256u, Count(0, 256, kOld)) << "bytes never flushed survived the power failure";
}

// --- the report -------------------------------------------------------------------------------

TEST_F(PersistenceTest, ReportNamesWhatWasNeverMadeDurable) {
  ASSERT_NO_FATAL_FAILURE(Connect(/*arm=*/false));
  rpma_log_set_function(KeepLogLine);
  size_t before = LoggedLines().size();  // what earlier tests logged
  ASSERT_NO_FATAL_FAILURE(Write(0, 64, 1));
  ASSERT_NO_FATAL_FAILURE(Write(64, 64, 2));
  ASSERT_NO_FATAL_FAILURE(Write(1024, 32, 3));
  ASSERT_NO_FATAL_FAILURE(Flush(1024, 32, RPMA_FLUSH_TYPE_PERSISTENT, 4));
  ASSERT_NO_FATAL_FAILURE(Write(2048, 16, 5));
  ASSERT_NO_FATAL_FAILURE(Flush(2048, 16, RPMA_FLUSH_TYPE_VISIBILITY, 6));
  EXPECT_EQ(2, rpma_sim_persistence_report());
  ASSERT_NO_FATAL_FAILURE(DisconnectAndDelete(&client_, &server_));
  std::string log = LoggedLines().substr(before);
  // The connection's end names its two ranges: 0-127 (requests 1 and 2) and 2048-2063.
  EXPECT_NE(std::string::npos, log.find("server connection")) << log;
  EXPECT_NE(std::string::npos, log.find("offset 0, 128 bytes, placed by work request 1 to 2"))
      << log;
  EXPECT_NE(std::string::npos, log.find("offset 2048, 16 bytes")) << log;
  EXPECT_NE(std::string::npos, log.find("its RPMA_FLUSH_TYPE_VISIBILITY flush does not")) << log;
  EXPECT_EQ(std::string::npos, log.find("offset 1024")) << log;
}

TEST_F(PersistenceTest, ReportIsEmptyWhenEverythingWasFlushed) {
  ASSERT_NO_FATAL_FAILURE(Connect(/*arm=*/false));
  rpma_log_set_function(KeepLogLine);
  size_t before = LoggedLines().size();  // what earlier tests logged
  ASSERT_NO_FATAL_FAILURE(Write(0, 4096, 1));
  ASSERT_NO_FATAL_FAILURE(Flush(0, 4096, RPMA_FLUSH_TYPE_PERSISTENT, 2));
  EXPECT_EQ(0, rpma_sim_persistence_report());
  ASSERT_NO_FATAL_FAILURE(DisconnectAndDelete(&client_, &server_));
  std::string log = LoggedLines().substr(before);
  EXPECT_EQ(std::string::npos, log.find("persistence")) << log;
}

// --- the rule ---------------------------------------------------------------------------------

// The server loses power at the client's third write: it never lands, the first two (one
// flushed) revert as the model says, and both sides lose the connection.
TEST_F(PersistenceTest, PowerFailureRuleFiresAtTheNthWrite) {
  ASSERT_EQ(0, rpma_sim_fault_add("power_failure:op=write,nth=3,side=server"));
  ASSERT_NO_FATAL_FAILURE(Connect(/*arm=*/false));  // armed by the rule
  ASSERT_NO_FATAL_FAILURE(Write(0, 64, 1));
  ASSERT_NO_FATAL_FAILURE(Flush(0, 64, RPMA_FLUSH_TYPE_PERSISTENT, 2));
  ASSERT_NO_FATAL_FAILURE(Write(64, 64, 3));
  ASSERT_EQ(
      0, rpma_write(client_, remote_, 128, source_->mr, 128, 64, RPMA_F_COMPLETION_ALWAYS, Ctx(4)));
  ibv_wc wc;
  ASSERT_NO_FATAL_FAILURE(PollOne(MainCq(client_), &wc));
  EXPECT_EQ(4u, wc.wr_id);
  EXPECT_NE(IBV_WC_SUCCESS, wc.status);
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(server_, RPMA_CONN_LOST));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(client_, RPMA_CONN_LOST));
  EXPECT_EQ(64u, Count(0, 64, kNew));
  EXPECT_EQ(kSize - 64, Count(64, kSize - 64, kOld));
  uint64_t fired = 0;
  EXPECT_EQ(0, rpma_sim_fault_count(&fired));
  EXPECT_GE(fired, 1u);
}

TEST(PowerFailureRuleTest, BadLossAndExitAreRefused) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_sim_fault_add("power_failure:loss=some"));
  EXPECT_EQ(RPMA_E_INVAL, rpma_sim_fault_add("power_failure:exit=256"));
  EXPECT_EQ(RPMA_E_INVAL, rpma_sim_fault_add("power_failure:us=5"));
  EXPECT_EQ(0, rpma_sim_fault_add("power_failure:loss=lines,exit=3,after=2,side=server"));
  // at=persist: a point no connection makes, so it takes point= and no side=, conn=, op= or
  // at_ms=.
  EXPECT_EQ(RPMA_E_INVAL, rpma_sim_fault_add("power_failure:at=persist"));
  EXPECT_EQ(RPMA_E_INVAL, rpma_sim_fault_add("power_failure:point=3,at=persist,side=server"));
  EXPECT_EQ(RPMA_E_INVAL, rpma_sim_fault_add("power_failure:point=3,at=persist,conn=1"));
  EXPECT_EQ(RPMA_E_INVAL, rpma_sim_fault_add("power_failure:point=3,at=persist,op=write"));
  EXPECT_EQ(RPMA_E_INVAL, rpma_sim_fault_add("power_failure:point=3,at=persist,at_ms=5"));
  EXPECT_EQ(RPMA_E_INVAL, rpma_sim_fault_add("power_failure:point=3,at=flush"));
  EXPECT_EQ(0, rpma_sim_fault_add("power_failure:point=3,at=persist,loss=words,keep=1:8"));
  EXPECT_EQ(0, rpma_sim_fault_clear());
}

}  // namespace
