// Tests of ReadFromProcess/WriteToProcess and ProcessVmBatch (sim/transport/process_vm):
// copies within this process and into and out of a forked child, an unmapped address, a pid
// nobody has, and many ranges in one call that stop at the first the kernel refuses.
#include "sim/transport/process_vm.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace rpma_sim {
namespace {

uint64_t AddressOf(const void* pointer) { return reinterpret_cast<uintptr_t>(pointer); }

// The start of a page that was mapped and unmapped again, so that nothing is mapped there.
uint64_t UnmappedAddress() {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* mapping = mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapping == MAP_FAILED) return 0;
  munmap(mapping, page);
  return AddressOf(mapping);
}

// A pid no process can have: pids stay below pid_max.
int ImpossiblePid() {
  std::ifstream file("/proc/sys/kernel/pid_max");
  int pid_max = 0;
  return file >> pid_max ? pid_max : 4194304;
}

// Forks a child that waits until the parent writes a byte to *go (LetGoAndReap), then exits
// with what `then` returns (2 if the byte never came). Returns its pid (-1 if none).
pid_t ForkWaiting(int* go, const std::function<int()>& then) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  const pid_t child = fork();
  if (child == 0) {
    close(fds[1]);
    char byte;
    _exit(read(fds[0], &byte, 1) == 1 ? then() : 2);
  }
  close(fds[0]);
  *go = fds[1];
  return child;
}

// Lets a child that waits to read a byte from `go` go on, and expects it to exit with 0.
void LetGoAndReap(int go, pid_t child) {
  ASSERT_EQ(write(go, "x", 1), 1);
  close(go);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(ProcessVmTest, ReadFromOurOwnProcessCopiesBytes) {
  const std::string source = "bytes from our own address space";
  std::string copy(source.size(), '\0');
  ASSERT_TRUE(ReadFromProcess(getpid(), AddressOf(source.data()), &copy[0], copy.size()));
  EXPECT_EQ(copy, source);
}

TEST(ProcessVmTest, WriteToOurOwnProcessCopiesBytes) {
  const std::string source = "written through process_vm_writev";
  std::string target(source.size(), '.');
  ASSERT_TRUE(WriteToProcess(getpid(), AddressOf(&target[0]), source.data(), source.size()));
  EXPECT_EQ(target, source);
}

TEST(ProcessVmTest, LargeCopyWithinOurOwnProcess) {
  std::vector<uint8_t> source(3 << 20);
  for (size_t i = 0; i < source.size(); ++i) source[i] = static_cast<uint8_t>(i * 131 + 7);
  std::vector<uint8_t> target(source.size());
  ASSERT_TRUE(WriteToProcess(getpid(), AddressOf(target.data()), source.data(), source.size()));
  EXPECT_TRUE(target == source);
}

TEST(ProcessVmTest, ZeroLengthSucceeds) {
  char byte = 'a';
  EXPECT_TRUE(ReadFromProcess(getpid(), AddressOf(&byte), &byte, 0));
  EXPECT_TRUE(WriteToProcess(getpid(), AddressOf(&byte), &byte, 0));
}

TEST(ProcessVmTest, WriteToAndReadFromAForkedChild) {
  // After fork the child has its own copy of `shared` at the same address.
  char shared[64] = "the parent's original bytes";
  int go;
  const pid_t child = ForkWaiting(&go, [] { return 0; });
  ASSERT_GE(child, 0);

  const char message[] = "written into the child";
  EXPECT_TRUE(WriteToProcess(child, AddressOf(shared), message, sizeof(message)));
  char back[sizeof(message)] = {};
  EXPECT_TRUE(ReadFromProcess(child, AddressOf(shared), back, sizeof(back)));
  EXPECT_STREQ(back, message);
  EXPECT_STREQ(shared, "the parent's original bytes");  // our copy is untouched

  LetGoAndReap(go, child);
}

TEST(ProcessVmTest, UnmappedAddressFails) {
  const uint64_t address = UnmappedAddress();
  ASSERT_NE(address, 0u);
  char buffer[16] = {};
  EXPECT_FALSE(ReadFromProcess(getpid(), address, buffer, sizeof(buffer)));
  EXPECT_FALSE(WriteToProcess(getpid(), address, buffer, sizeof(buffer)));
}

TEST(ProcessVmTest, RangeRunningIntoAnUnmappedPageFails) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  auto* pages = static_cast<uint8_t*>(
      mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(pages, MAP_FAILED);
  ASSERT_EQ(munmap(pages + page, page), 0);
  std::vector<uint8_t> buffer(page);
  // Half of it is mapped: the first part copies, the rest cannot.
  EXPECT_FALSE(ReadFromProcess(getpid(), AddressOf(pages + page / 2), buffer.data(), page));
  EXPECT_FALSE(WriteToProcess(getpid(), AddressOf(pages + page / 2), buffer.data(), page));
  munmap(pages, page);
}

TEST(ProcessVmTest, PidThatDoesNotExistFails) {
  const int pid = ImpossiblePid();
  ASSERT_EQ(kill(pid, 0), -1);
  char source[8] = "abcdefg";
  char target[8] = {};
  EXPECT_FALSE(ReadFromProcess(pid, AddressOf(source), target, sizeof(target)));
  EXPECT_FALSE(WriteToProcess(pid, AddressOf(target), source, sizeof(source)));
}

// Many ranges, some of no bytes, in one batch: each lands where it should, in order (the
// later of two copies to the same place wins).
TEST(ProcessVmBatchTest, MovesEveryRangeInOrder) {
  std::vector<uint8_t> source(ProcessVmBatch::kCopies * 8);
  for (size_t i = 0; i < source.size(); ++i) source[i] = static_cast<uint8_t>(i + 1);
  std::vector<uint8_t> target(ProcessVmBatch::kCopies * 4, 0);
  ProcessVmBatch batch(getpid());
  // Copy i puts source's 8 bytes i into target's slot i / 2: odd copies overwrite even ones
  // (copy 5 has no bytes).
  for (size_t i = 0; i < ProcessVmBatch::kCopies; ++i) {
    const size_t length = i == 5 ? 0 : 8;
    ASSERT_TRUE(batch.Add(ProcessVmBatch::Direction::kToProcess, AddressOf(&target[i / 2 * 8]),
                          &source[i * 8], length));
  }
  EXPECT_EQ(ProcessVmBatch::kCopies, batch.size());
  EXPECT_EQ(ProcessVmBatch::kCopies, batch.Move());
  EXPECT_EQ(0u, batch.size());
  for (size_t slot = 0; slot < ProcessVmBatch::kCopies / 2; ++slot) {
    const size_t last = slot == 2 ? 4 : 2 * slot + 1;  // copy 5 moved no bytes
    EXPECT_EQ(0, memcmp(&target[slot * 8], &source[last * 8], 8)) << "slot " << slot;
  }

  // Back again, the other way: read the slots into a fresh buffer.
  std::vector<uint8_t> back(target.size(), 0);
  ASSERT_TRUE(batch.Add(ProcessVmBatch::Direction::kFromProcess, AddressOf(target.data()),
                        back.data(), back.size()));
  EXPECT_EQ(1u, batch.Move());
  EXPECT_TRUE(back == target);
}

TEST(ProcessVmBatchTest, RefusesTheOtherDirectionAndOneTooMany) {
  uint8_t bytes[16] = {};
  ProcessVmBatch batch(getpid());
  EXPECT_FALSE(batch.Refuses(ProcessVmBatch::Direction::kFromProcess));  // empty: either way
  ASSERT_TRUE(batch.Add(ProcessVmBatch::Direction::kToProcess, AddressOf(bytes), bytes + 8, 8));
  EXPECT_TRUE(batch.Refuses(ProcessVmBatch::Direction::kFromProcess));
  EXPECT_FALSE(batch.Add(ProcessVmBatch::Direction::kFromProcess, AddressOf(bytes), bytes, 8));
  while (batch.size() < ProcessVmBatch::kCopies)
    ASSERT_TRUE(batch.Add(ProcessVmBatch::Direction::kToProcess, AddressOf(bytes), bytes + 8, 8));
  EXPECT_TRUE(batch.Refuses(ProcessVmBatch::Direction::kToProcess));
  EXPECT_FALSE(batch.Add(ProcessVmBatch::Direction::kToProcess, AddressOf(bytes), bytes + 8, 8));
  EXPECT_EQ(ProcessVmBatch::kCopies, batch.Move());
  EXPECT_FALSE(batch.Refuses(ProcessVmBatch::Direction::kFromProcess));  // empty again
}

// The third range is not mapped: the first two move, it and the ones after it do not.
TEST(ProcessVmBatchTest, StopsAtTheFirstRangeTheKernelRefuses) {
  const uint64_t unmapped = UnmappedAddress();
  ASSERT_NE(unmapped, 0u);
  uint8_t source[4][8];
  memset(source, 0x77, sizeof(source));
  uint8_t target[4][8] = {};
  ProcessVmBatch batch(getpid());
  const uint64_t places[4] = {AddressOf(target[0]), AddressOf(target[1]), unmapped,
                              AddressOf(target[3])};
  for (int i = 0; i < 4; ++i)
    ASSERT_TRUE(batch.Add(ProcessVmBatch::Direction::kToProcess, places[i], source[i], 8));
  EXPECT_EQ(2u, batch.Move());
  EXPECT_EQ(0, memcmp(target[0], source[0], 8));
  EXPECT_EQ(0, memcmp(target[1], source[1], 8));
  const uint8_t zeros[8] = {};
  EXPECT_EQ(0, memcmp(target[3], zeros, 8));
}

// Into a forked child: its copy of the buffer changes, ours does not.
TEST(ProcessVmBatchTest, MovesRangesIntoAForkedChild) {
  char shared[4][16] = {"zero", "one", "two", "three"};
  int go;
  const pid_t child = ForkWaiting(&go, [&shared] {
    // Each of its slots now holds the parent's words in reverse.
    const bool landed = strcmp(shared[0], "three") == 0 && strcmp(shared[3], "zero") == 0 &&
                        strcmp(shared[1], "two") == 0 && strcmp(shared[2], "one") == 0;
    return landed ? 0 : 1;
  });
  ASSERT_GE(child, 0);
  const char words[4][16] = {"three", "two", "one", "zero"};
  ProcessVmBatch batch(child);
  for (int i = 0; i < 4; ++i)
    ASSERT_TRUE(batch.Add(ProcessVmBatch::Direction::kToProcess, AddressOf(shared[i]),
                          const_cast<uint8_t*>(reinterpret_cast<const uint8_t*>(words[i])),
                          sizeof(words[i])));
  EXPECT_EQ(4u, batch.Move());
  EXPECT_STREQ(shared[0], "zero");  // ours is untouched
  LetGoAndReap(go, child);
}

TEST(ProcessVmBatchTest, APidThatDoesNotExistMovesNothing) {
  uint8_t bytes[8] = {};
  ProcessVmBatch batch(ImpossiblePid());
  ASSERT_TRUE(batch.Add(ProcessVmBatch::Direction::kToProcess, AddressOf(bytes), bytes, 8));
  EXPECT_EQ(0u, batch.Move());
}

}  // namespace
}  // namespace rpma_sim
