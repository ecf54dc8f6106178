// Tests of FindShmConnections and DescribeShmConnection (sim/transport/segment_census): a
// segment is found where it is mapped, named or already unlinked, once, with what its header
// says of the two processes. Other tests' segments may be mapped on the host meanwhile: each
// test looks only for its own (by nonce).
#include "sim/transport/segment_census.h"

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/transport/proc_maps.h"
#include "sim/transport/ptrace_permit.h"

namespace rpma_sim {
namespace {

const size_t kRingCapacity = ShmSegment::RingCapacityFor(10);

// The connections found whose segment has `nonce`.
std::vector<ShmConnection> Found(uint64_t nonce) {
  std::vector<ShmConnection> found;
  for (const ShmConnection& connection : FindShmConnections())
    if (connection.header.nonce == nonce) found.push_back(connection);
  return found;
}

// The Yama a test replaced is put back after it, whatever happened.
class SegmentCensusTest : public ::testing::Test {
 protected:
  void TearDown() override { PtracePermits::SetSystemForTest(nullptr); }
};

TEST_F(SegmentCensusTest, AnOfferedSegmentIsFoundByItsNameWithNoServerYet) {
  std::shared_ptr<ShmSegment> client;
  ASSERT_EQ(ShmSegment::Create(kRingCapacity, &client), Status::kOk);
  std::vector<ShmConnection> found = Found(client->nonce());
  ASSERT_EQ(1u, found.size());
  EXPECT_EQ(client->name(), found[0].name);
  EXPECT_EQ(getpid(), found[0].header.pid[ShmSegment::kClient]);
  EXPECT_EQ(0, found[0].header.pid[ShmSegment::kServer]);
  EXPECT_EQ(
      std::vector<std::string>{"client " + std::to_string(getpid()) + ": offered, no server yet"},
      DescribeShmConnection(found[0]));
}

TEST_F(SegmentCensusTest, AGoneSegmentIsNotFound) {
  std::shared_ptr<ShmSegment> client;
  ASSERT_EQ(ShmSegment::Create(kRingCapacity, &client), Status::kOk);
  const uint64_t nonce = client->nonce();
  client.reset();
  EXPECT_TRUE(Found(nonce).empty());
}

// A Yama at scope 1 (this kernel has none): the real check that the peer maps the segment,
// and the real prctl too, where there is a Yama to take it; the header then says so.
int ScopeOne() { return 1; }
int Named(int pid) {
  prctl(PR_SET_PTRACER, static_cast<unsigned long>(pid), 0, 0, 0);
  return 0;
}
const PtracePermits::System kYamaNaming{ScopeOne, MapsSegment, Named};

// The server side in a child process, its name unlinked when it opened it: found once (both
// processes map it), each way described from the header. Under Yama each names the other.
TEST_F(SegmentCensusTest, AConnectionBetweenTwoProcessesIsFoundOnceWithBothWays) {
  PtracePermits::SetSystemForTest(&kYamaNaming);
  std::shared_ptr<ShmSegment> client;
  ASSERT_EQ(ShmSegment::Create(kRingCapacity, &client), Status::kOk);
  // Read before the fork: a child does not inherit the mapping (MADV_DONTFORK).
  const std::string name = client->name();
  const uint64_t nonce = client->nonce();
  int ready[2], go[2];
  ASSERT_EQ(0, pipe(ready));
  ASSERT_EQ(0, pipe(go));
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::shared_ptr<ShmSegment> server;
    bool opened = ShmSegment::Open(name, nonce, &server) == Status::kOk && server->ProbePeer();
    char byte = opened ? 1 : 0;
    if (write(ready[1], &byte, 1) != 1 || read(go[0], &byte, 1) != 1) _exit(2);
    _exit(opened ? 0 : 1);
  }
  close(ready[1]);  // a child that dies ends the read below
  close(go[0]);
  char byte = 0;
  ASSERT_EQ(1, read(ready[0], &byte, 1));
  EXPECT_EQ(1, byte) << "the child could not open the segment";
  EXPECT_TRUE(client->ProbePeer());
  std::vector<ShmConnection> found = Found(nonce);
  ASSERT_EQ(0, write(go[1], &byte, 1) == 1 ? 0 : errno);
  int status = 0;
  ASSERT_EQ(child, waitpid(child, &status, 0));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  client.reset();  // its name given back to the Yama that gave it
  EXPECT_TRUE(Found(nonce).empty());

  ASSERT_EQ(1u, found.size());
  const ShmSegment::HeaderView& header = found[0].header;
  EXPECT_EQ(getpid(), header.pid[ShmSegment::kClient]);
  EXPECT_EQ(child, header.pid[ShmSegment::kServer]);
  const std::string client_pid = std::to_string(getpid()), server_pid = std::to_string(child);
  EXPECT_EQ((std::vector<std::string>{"client " + client_pid + " -> server " + server_pid +
                                          ": by process_vm; the server named it (Yama)",
                                      "server " + server_pid + " -> client " + client_pid +
                                          ": by process_vm; the client named it (Yama)"}),
            DescribeShmConnection(found[0]));
  close(ready[0]);
  close(go[1]);
}

// Without process_vm, or before a probe, the header says neither side reaches the other.
TEST_F(SegmentCensusTest, ASideThatDoesNotReachItsPeerIsDescribedSo) {
  std::shared_ptr<ShmSegment> client, server;
  ASSERT_EQ(ShmSegment::Create(kRingCapacity, &client), Status::kOk);
  ASSERT_EQ(ShmSegment::Open(client->name(), client->nonce(), &server), Status::kOk);
  ASSERT_TRUE(server->ProbePeer());  // only the server probes
  std::vector<ShmConnection> found = Found(client->nonce());
  ASSERT_EQ(1u, found.size());
  const std::string pid = std::to_string(getpid());
  EXPECT_EQ((std::vector<std::string>{
                "client " + pid + " -> server " + pid +
                    ": no process_vm (mapped regions by memcpy, the rest through the server's "
                    "threads)",
                "server " + pid + " -> client " + pid + ": by process_vm"}),
            DescribeShmConnection(found[0]));
}

// Under Yama a process of this user may read the other's maps but not its memory: the
// segment is listed by its name and the process it was seen in.
TEST_F(SegmentCensusTest, ASegmentWhoseHeaderCannotBeReadIsListedSo) {
  ShmConnection unreadable;
  unreadable.name = "rpma-sim-12-0-abcdef01";
  unreadable.seen_in = 12;
  EXPECT_EQ(std::vector<std::string>{"process 12 maps segment rpma-sim-12-0-abcdef01: its header "
                                     "could not be read here (ptrace rules, or another version)"},
            DescribeShmConnection(unreadable));
}

}  // namespace
}  // namespace rpma_sim
