// Tests of ShmSegment (sim/transport/shm_segment): the name and mode of a new segment, opening
// it with the right and a wrong nonce, names that are not rpma-sim's, the rings shared by the
// two sides, removing the segments of dead processes, and the process_vm probe. Both sides
// are mapped in this one process; every test removes the names it made.
#include "sim/transport/shm_segment.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <boost/interprocess/shared_memory_object.hpp>
#include <memory>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "sim/common/log.h"

namespace rpma_sim {
namespace {

namespace bip = boost::interprocess;

// The rings of a connection with librpma's default queue depth.
const size_t kRingCapacity = ShmSegment::RingCapacityFor(10);

std::string ShmPath(const std::string& name) { return "/dev/shm/" + name; }

bool Exists(const std::string& name) {
  struct stat st;
  return stat(ShmPath(name).c_str(), &st) == 0;
}

// The errno of stat on /dev/shm/<name>, or 0 if it exists.
int StatError(const std::string& name) {
  struct stat st;
  return stat(ShmPath(name).c_str(), &st) == 0 ? 0 : errno;
}

// A random suffix for names made here. Bazel runs each test in its own pid namespace, so
// tests running side by side (or one after an aborted one) may share a pid but not this.
std::string RandomSuffix() {
  std::random_device random;
  char hex[16];
  snprintf(hex, sizeof(hex), "%08x", random());
  return hex;
}

// A shared memory object made directly with Boost.Interprocess (replacing one an aborted run
// left), removed when it goes.
class RawShmObject {
 public:
  explicit RawShmObject(std::string name) : name_(std::move(name)) {
    bip::shared_memory_object::remove(name_.c_str());
    bip::shared_memory_object object(bip::create_only, name_.c_str(), bip::read_write);
    object.truncate(4096);
  }
  ~RawShmObject() { bip::shared_memory_object::remove(name_.c_str()); }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
};

// Sets the modification time of /dev/shm/<name> a minute back, past
// ShmSegment::kStaleAfterSeconds.
bool MakeOld(const std::string& name) {
  timespec times[2];
  clock_gettime(CLOCK_REALTIME, &times[0]);
  times[0].tv_sec -= 60;
  times[1] = times[0];
  return utimensat(AT_FDCWD, ShmPath(name).c_str(), times, 0) == 0;
}

// The pid of a child that has exited and been waited for: no process has it (until the
// kernel hands it out again, which takes a full turn of the pid space).
pid_t DeadPid() {
  pid_t child = fork();
  if (child == 0) _exit(0);
  int status = 0;
  waitpid(child, &status, 0);
  return child;
}

ssize_t WriteText(ShmRing& ring, const std::string& text) {
  iovec part{const_cast<char*>(text.data()), text.size()};
  return ring.TryWrite(&part, 1);
}

std::string ReadText(ShmRing& ring, size_t size) {
  std::string out(size, '\0');
  ssize_t n = ring.TryRead(reinterpret_cast<uint8_t*>(&out[0]), size);
  out.resize(n < 0 ? 0 : static_cast<size_t>(n));
  return out;
}

TEST(ShmSegmentTest, CreateMakesAnOwnerOnlySegmentNamedAfterThisProcess) {
  std::shared_ptr<ShmSegment> client;
  ASSERT_EQ(ShmSegment::Create(kRingCapacity, &client), Status::kOk);
  ASSERT_NE(client, nullptr);
  const std::string prefix = "rpma-sim-" + std::to_string(getpid()) + "-";
  EXPECT_EQ(client->name().compare(0, prefix.size(), prefix), 0) << client->name();
  EXPECT_EQ(client->side(), ShmSegment::kClient);
  struct stat st;
  ASSERT_EQ(stat(ShmPath(client->name()).c_str(), &st), 0) << client->name();
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  client->Unlink();
  EXPECT_EQ(StatError(client->name()), ENOENT);
}

TEST(ShmSegmentTest, RingsAreSizedFromTheQueueDepthWithinBounds) {
  EXPECT_EQ(ShmSegment::RingCapacityFor(0), ShmSegment::kMinRingCapacity);
  EXPECT_EQ(ShmSegment::RingCapacityFor(1), ShmSegment::kMinRingCapacity);
  EXPECT_EQ(ShmSegment::RingCapacityFor(10), 64u << 10);  // librpma's default depth
  EXPECT_EQ(ShmSegment::RingCapacityFor(128), 1u << 20);
  EXPECT_EQ(ShmSegment::RingCapacityFor(100000), ShmSegment::kMaxRingCapacity);
}

TEST(ShmSegmentTest, AnIdleConnectionOfDefaultDepthTakesAbout180KiB) {
  std::shared_ptr<ShmSegment> client;
  ASSERT_EQ(ShmSegment::Create(kRingCapacity, &client), Status::kOk);
  struct stat st;
  ASSERT_EQ(stat(ShmPath(client->name()).c_str(), &st), 0);
  EXPECT_LE(st.st_size, 180 << 10);  // two 64 KiB rings, the header, 48 KiB of direct areas
  // Allocated at creation (a full /dev/shm is Create's error, not a SIGBUS later).
  EXPECT_GE(static_cast<off_t>(st.st_blocks) * 512, st.st_size);
}

TEST(ShmSegmentTest, CreateRefusesRingSizesOutOfBounds) {
  std::shared_ptr<ShmSegment> segment;
  EXPECT_EQ(ShmSegment::Create(ShmSegment::kMinRingCapacity / 2, &segment), Status::kInvalid);
  EXPECT_EQ(ShmSegment::Create(ShmSegment::kMaxRingCapacity * 2, &segment), Status::kInvalid);
  EXPECT_EQ(ShmSegment::Create(ShmSegment::kMinRingCapacity + 1, &segment), Status::kInvalid);
  EXPECT_EQ(segment, nullptr);
}

TEST(ShmSegmentTest, OpenRefusesAHeaderWhoseRingSizeDoesNotMatchTheSegment) {
  std::shared_ptr<ShmSegment> client, server;
  ASSERT_EQ(ShmSegment::Create(kRingCapacity, &client), Status::kOk);
  int fd = open(ShmPath(client->name()).c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  // The header: magic (8 bytes), version (4), ring capacity (4).
  uint32_t doubled = static_cast<uint32_t>(kRingCapacity * 2);
  ASSERT_EQ(pwrite(fd, &doubled, sizeof(doubled), 12), static_cast<ssize_t>(sizeof(doubled)));
  close(fd);
  EXPECT_EQ(ShmSegment::Open(client->name(), client->nonce(), &server), Status::kProvider);
  EXPECT_EQ(server, nullptr);
}

TEST(ShmSegmentTest, BothSidesInOneProcessShareOneMapping) {
  std::shared_ptr<ShmSegment> client, server;
  ASSERT_EQ(ShmSegment::Create(kRingCapacity, &client), Status::kOk);
  ASSERT_EQ(ShmSegment::Open(client->name(), client->nonce(), &server), Status::kOk);
  EXPECT_EQ(server->mapping(), client->mapping());
  // The mapping outlives the side that made it.
  const uint64_t nonce = client->nonce();
  client.reset();
  EXPECT_EQ(server->nonce(), nonce);
  const std::string text = "still mapped";
  iovec part{const_cast<char*>(text.data()), text.size()};
  EXPECT_EQ(server->outbound().TryWrite(&part, 1), -1);  // the client's consumer closed
}

TEST(ShmSegmentTest, TwoSegmentsGetDifferentNames) {
  std::shared_ptr<ShmSegment> first, second;
  ASSERT_EQ(ShmSegment::Create(kRingCapacity, &first), Status::kOk);
  ASSERT_EQ(ShmSegment::Create(kRingCapacity, &second), Status::kOk);
  EXPECT_NE(first->name(), second->name());
}

TEST(ShmSegmentTest, DestructorRemovesTheName) {
  std::string name;
  {
    std::shared_ptr<ShmSegment> client;
    ASSERT_EQ(ShmSegment::Create(kRingCapacity, &client), Status::kOk);
    name = client->name();
    ASSERT_TRUE(Exists(name));
  }
  EXPECT_EQ(StatError(name), ENOENT);
}

TEST(ShmSegmentTest, OpenWithTheRightNonceSucceedsAndRemovesTheName) {
  std::shared_ptr<ShmSegment> client, server;
  ASSERT_EQ(ShmSegment::Create(kRingCapacity, &client), Status::kOk);
  ASSERT_EQ(ShmSegment::Open(client->name(), client->nonce(), &server), Status::kOk);
  ASSERT_NE(server, nullptr);
  EXPECT_EQ(server->side(), ShmSegment::kServer);
  EXPECT_EQ(server->name(), client->name());
  EXPECT_EQ(server->nonce(), client->nonce());
  EXPECT_EQ(StatError(client->name()), ENOENT);
  // The peer's pid is taken from the header only by ProbePeer, and kept.
  EXPECT_EQ(server->peer_pid(), 0);
  server->ProbePeer();
  client->ProbePeer();
  EXPECT_EQ(server->peer_pid(), getpid());
  EXPECT_EQ(client->peer_pid(), getpid());
}

TEST(ShmSegmentTest, APeerClaimingThisProcessIsNotBelievedWithoutItsSideHere) {
  std::shared_ptr<ShmSegment> client, server;
  ASSERT_EQ(ShmSegment::Create(kRingCapacity, &client), Status::kOk);
  ASSERT_EQ(ShmSegment::Open(client->name(), client->nonce(), &server), Status::kOk);
  // The header still names this process as the client, but no client side is open here
  // any more: as if another process had written our pid there.
  client.reset();
  EXPECT_FALSE(server->ProbePeer());
  EXPECT_FALSE(server->WeReachPeer());
  EXPECT_EQ(server->peer_pid(), 0);
  uint64_t value = 0;
  EXPECT_FALSE(server->ReadPeerMemory(reinterpret_cast<uintptr_t>(&value), &value, 8));
}

TEST(ShmSegmentTest, PeerMemoryIsReachableUntilThePeerRevokesIt) {
  std::shared_ptr<ShmSegment> client, server;
  ASSERT_EQ(ShmSegment::Create(kRingCapacity, &client), Status::kOk);
  ASSERT_EQ(ShmSegment::Open(client->name(), client->nonce(), &server), Status::kOk);
  ASSERT_TRUE(server->ProbePeer());
  uint64_t source = 0x1122334455667788, target = 0;
  EXPECT_TRUE(server->ReadPeerMemory(reinterpret_cast<uintptr_t>(&source), &target, 8));
  EXPECT_EQ(source, target);
  uint64_t written = 0;
  EXPECT_TRUE(server->WritePeerMemory(reinterpret_cast<uintptr_t>(&written), &source, 8));
  EXPECT_EQ(source, written);
  client->RevokeReferences();
  target = 0;
  EXPECT_FALSE(server->ReadPeerMemory(reinterpret_cast<uintptr_t>(&source), &target, 8));
  EXPECT_EQ(0u, target);
  EXPECT_FALSE(server->WritePeerMemory(reinterpret_cast<uintptr_t>(&written), &target, 8));
}

TEST(ShmSegmentTest, OpenWithAWrongNonceFails) {
  std::shared_ptr<ShmSegment> client, server;
  ASSERT_EQ(ShmSegment::Create(kRingCapacity, &client), Status::kOk);
  EXPECT_EQ(ShmSegment::Open(client->name(), client->nonce() + 1, &server), Status::kProvider);
  EXPECT_EQ(server, nullptr);
  EXPECT_TRUE(Exists(client->name()));  // a wrong offer leaves the segment alone
}

TEST(ShmSegmentTest, OpenOfANameNotInRpmaSimsPatternFails) {
  // One that exists but is not ours: it is refused by its name, before it is opened.
  RawShmObject foreign("rpma-simtest-" + std::to_string(getpid()) + "-" + RandomSuffix());
  const std::string pid = std::to_string(getpid());
  for (const std::string& name :
       {foreign.name(), std::string("other-" + pid + "-0-00000000"), std::string("rpma-sim-"),
        std::string("rpma-sim-" + pid), std::string("rpma-sim--0-00000000"),
        std::string("rpma-sim-x" + pid + "-0-00000000"),
        std::string("rpma-sim-" + pid + "-0-../../etc/passwd"),
        std::string("rpma-sim-" + pid + "-0-" + std::string(80, 'a')),
        // A "pid" too long for an int (the name comes from the peer).
        std::string("rpma-sim-99999999999999999999-0-00000000")}) {
    std::shared_ptr<ShmSegment> server;
    EXPECT_EQ(ShmSegment::Open(name, 0, &server), Status::kProvider) << name;
    EXPECT_EQ(server, nullptr) << name;
  }
  EXPECT_TRUE(Exists(foreign.name()));
}

TEST(ShmSegmentTest, OpenOfAMissingSegmentFails) {
  std::shared_ptr<ShmSegment> server;
  const std::string name = "rpma-sim-" + std::to_string(getpid()) + "-999999-" + RandomSuffix();
  ASSERT_FALSE(Exists(name));
  EXPECT_EQ(ShmSegment::Open(name, 0, &server), Status::kProvider);
  EXPECT_EQ(server, nullptr);
}

TEST(ShmSegmentTest, OpenOfAnObjectOfTheWrongSizeFails) {
  RawShmObject small("rpma-sim-" + std::to_string(getpid()) + "-0-small" + RandomSuffix());
  std::shared_ptr<ShmSegment> server;
  EXPECT_EQ(ShmSegment::Open(small.name(), 0, &server), Status::kProvider);
  EXPECT_EQ(server, nullptr);
}

// The format of the last error logged (RecordLogFormat).
std::string g_last_error_format;

void RecordLogFormat(LogLevel level, const char*, int, const char*, const char* format, ...) {
  if (level <= LogLevel::kError) g_last_error_format = format;
}

TEST(ShmSegmentTest, OpenRefusesASegmentLargerThanAnyOfferBeforeMappingIt) {
  std::shared_ptr<ShmSegment> client, server;
  ASSERT_EQ(ShmSegment::Create(kRingCapacity, &client), Status::kOk);
  // The peer grows it past the largest rings (sparse: no memory taken).
  int fd = open(("/dev/shm/" + client->name()).c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, static_cast<off_t>(1) << 40), 0);
  close(fd);
  LogSetFunction(&RecordLogFormat);
  g_last_error_format.clear();
  EXPECT_EQ(ShmSegment::Open(client->name(), client->nonce(), &server), Status::kProvider);
  LogSetFunction(nullptr);
  EXPECT_EQ(server, nullptr);
  // Refused for its size, not found wrong after mapping a terabyte.
  EXPECT_EQ(g_last_error_format, "shared memory segment %s has the wrong size\n");
}

TEST(ShmSegmentTest, ClientOutboundIsServerInboundAndBack) {
  std::shared_ptr<ShmSegment> client, server;
  ASSERT_EQ(ShmSegment::Create(kRingCapacity, &client), Status::kOk);
  ASSERT_EQ(ShmSegment::Open(client->name(), client->nonce(), &server), Status::kOk);
  EXPECT_EQ(WriteText(client->outbound(), "ping"), 4);
  EXPECT_EQ(server->outbound().Readable(), 0);
  EXPECT_EQ(ReadText(server->inbound(), 16), "ping");
  EXPECT_EQ(WriteText(server->outbound(), "pong!"), 5);
  EXPECT_EQ(client->outbound().Readable(), 0);
  EXPECT_EQ(ReadText(client->inbound(), 16), "pong!");
}

// The server's check alone (CheckHeader), on a segment's header scribbled on in place:
// what tests/fuzz/shm_segment_fuzzer.cc drives with a peer's arbitrary header.
TEST(ShmSegmentTest, CheckHeaderAcceptsOnlyTheSegmentOffered) {
  std::shared_ptr<ShmSegment> client;
  ASSERT_EQ(ShmSegment::Create(kRingCapacity, &client), Status::kOk);
  auto* header = static_cast<uint8_t*>(const_cast<void*>(client->mapping()));
  const size_t size = ShmSegment::SizeFor(kRingCapacity);
  const uint64_t nonce = client->nonce();
  EXPECT_EQ(ShmSegment::CheckHeader(header, size, nonce), kRingCapacity);
  EXPECT_EQ(ShmSegment::CheckHeader(header, size, nonce + 1), 0u);
  EXPECT_EQ(ShmSegment::CheckHeader(header, size - 4096, nonce), 0u);
  EXPECT_EQ(ShmSegment::CheckHeader(header, size + 4096, nonce), 0u);
  // Each field of the header's start in turn: magic (8 bytes), version (4), capacity (4).
  for (size_t offset : {0, 8, 12}) {
    header[offset] ^= 1;
    EXPECT_EQ(ShmSegment::CheckHeader(header, size, nonce), 0u) << "byte " << offset;
    header[offset] ^= 1;
  }
  EXPECT_EQ(ShmSegment::CheckHeader(header, size, nonce), kRingCapacity);
}

TEST(ShmSegmentTest, CheckHeaderRefusesCapacitiesOutOfBoundsEvenWithAMatchingSize) {
  std::shared_ptr<ShmSegment> client;
  ASSERT_EQ(ShmSegment::Create(kRingCapacity, &client), Status::kOk);
  void* header = const_cast<void*>(client->mapping());
  for (size_t capacity : {size_t{0}, ShmSegment::kMinRingCapacity / 2,
                          ShmSegment::kMinRingCapacity + 1, ShmSegment::kMaxRingCapacity * 2}) {
    ShmSegment::InitHeader(header, capacity, 7);
    EXPECT_EQ(ShmSegment::CheckHeader(header, ShmSegment::SizeFor(capacity), 7), 0u) << capacity;
  }
}

TEST(ShmSegmentTest, RingOfIsTheRingEachSideUses) {
  std::shared_ptr<ShmSegment> client;
  ASSERT_EQ(ShmSegment::Create(kRingCapacity, &client), Status::kOk);
  auto* mapping = const_cast<void*>(client->mapping());
  ShmRing client_to_server = ShmSegment::RingOf(mapping, kRingCapacity, ShmSegment::kClient);
  ShmRing server_to_client = ShmSegment::RingOf(mapping, kRingCapacity, ShmSegment::kServer);
  EXPECT_EQ(WriteText(client->outbound(), "ping"), 4);
  EXPECT_EQ(ReadText(client_to_server, 16), "ping");
  EXPECT_EQ(WriteText(server_to_client, "pong!"), 5);
  EXPECT_EQ(ReadText(client->inbound(), 16), "pong!");
  EXPECT_EQ(ShmSegment::CheckHeader(mapping, ShmSegment::SizeFor(kRingCapacity), client->nonce()),
            kRingCapacity);
}

TEST(ShmSegmentTest, DestroyingOneSideClosesItsRings) {
  std::shared_ptr<ShmSegment> client, server;
  ASSERT_EQ(ShmSegment::Create(kRingCapacity, &client), Status::kOk);
  ASSERT_EQ(ShmSegment::Open(client->name(), client->nonce(), &server), Status::kOk);
  client.reset();
  EXPECT_TRUE(server->inbound().producer_closed());
  EXPECT_TRUE(server->outbound().consumer_closed());
  EXPECT_EQ(WriteText(server->outbound(), "late"), -1);
}

TEST(ShmSegmentTest, RemoveStaleRemovesTheSegmentOfADeadProcess) {
  const pid_t dead = DeadPid();
  ASSERT_GT(dead, 0);
  // Nobody holds its lock (as when its creator died), and it is old.
  RawShmObject stale("rpma-sim-" + std::to_string(dead) + "-0-deadbeef");
  ASSERT_TRUE(Exists(stale.name()));
  ASSERT_TRUE(MakeOld(stale.name()));
  EXPECT_GE(ShmSegment::RemoveStale(), 1);
  EXPECT_EQ(StatError(stale.name()), ENOENT);
}

TEST(ShmSegmentTest, RemoveStaleRemovesASegmentItsCreatorLeftBehind) {
  // A child creates a segment and dies without removing it (as SIGKILL would leave it).
  int fds[2];
  ASSERT_EQ(0, pipe(fds));
  pid_t child = fork();
  if (child == 0) {
    std::shared_ptr<ShmSegment> segment;
    if (ShmSegment::Create(kRingCapacity, &segment) != Status::kOk) _exit(1);
    std::string name = segment->name() + "\n";
    if (write(fds[1], name.data(), name.size()) != static_cast<ssize_t>(name.size())) _exit(2);
    _exit(0);  // no destructors: the name stays
  }
  close(fds[1]);
  char buffer[128] = {};
  ssize_t n = read(fds[0], buffer, sizeof(buffer) - 1);
  close(fds[0]);
  int status = 0;
  ASSERT_EQ(child, waitpid(child, &status, 0));
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ASSERT_GT(n, 1);
  std::string name(buffer, static_cast<size_t>(n) - 1);
  ASSERT_TRUE(Exists(name));
  ShmSegment::RemoveStale();
  EXPECT_TRUE(Exists(name)) << "removed while younger than kStaleAfterSeconds";
  ASSERT_TRUE(MakeOld(name));
  EXPECT_GE(ShmSegment::RemoveStale(), 1);
  EXPECT_EQ(StatError(name), ENOENT);
  bip::shared_memory_object::remove(name.c_str());
}

TEST(ShmSegmentTest, RemoveStaleKeepsTheSegmentOfALiveCreatorHoweverOld) {
  std::shared_ptr<ShmSegment> client;
  ASSERT_EQ(ShmSegment::Create(kRingCapacity, &client), Status::kOk);
  ASSERT_TRUE(MakeOld(client->name()));
  ShmSegment::RemoveStale();
  EXPECT_TRUE(Exists(client->name()));
}

TEST(ShmSegmentTest, RemoveStaleKeepsAFreshSegmentNobodyLocksYet) {
  RawShmObject fresh("rpma-sim-1-0-" + RandomSuffix());
  ShmSegment::RemoveStale();
  EXPECT_TRUE(Exists(fresh.name()));
}

TEST(ShmSegmentTest, RemoveStaleLeavesNamesThatAreNotOurs) {
  const pid_t dead = DeadPid();
  ASSERT_GT(dead, 0);
  RawShmObject foreign("rpma-simx-" + std::to_string(dead) + "-0-" + RandomSuffix());
  ShmSegment::RemoveStale();
  EXPECT_TRUE(Exists(foreign.name()));
}

TEST(ShmSegmentTest, ProbePeerWithinOneProcessSucceedsAndThePeerSeesIt) {
  std::shared_ptr<ShmSegment> client, server;
  ASSERT_EQ(ShmSegment::Create(kRingCapacity, &client), Status::kOk);
  ASSERT_EQ(ShmSegment::Open(client->name(), client->nonce(), &server), Status::kOk);
  EXPECT_FALSE(server->WeReachPeer());
  EXPECT_FALSE(client->PeerReachesUs());
  EXPECT_TRUE(server->ProbePeer());
  EXPECT_TRUE(server->WeReachPeer());
  EXPECT_TRUE(client->PeerReachesUs());
  EXPECT_FALSE(client->WeReachPeer());
  EXPECT_TRUE(client->ProbePeer());
  EXPECT_TRUE(server->PeerReachesUs());
}

}  // namespace
}  // namespace rpma_sim
