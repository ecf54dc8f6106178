// Tests of ReadFromProcess/WriteToProcess (sim/transport/process_vm): copies within this
// process and into and out of a forked child, an unmapped address, and a pid nobody has.
#include "sim/transport/process_vm.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
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
  int go[2];
  ASSERT_EQ(pipe(go), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(go[1]);
    char byte;
    // Stays alive until the parent writes to the pipe or closes it.
    ssize_t n = read(go[0], &byte, 1);
    _exit(n == 1 ? 0 : 1);
  }
  close(go[0]);

  const char message[] = "written into the child";
  EXPECT_TRUE(WriteToProcess(child, AddressOf(shared), message, sizeof(message)));
  char back[sizeof(message)] = {};
  EXPECT_TRUE(ReadFromProcess(child, AddressOf(shared), back, sizeof(back)));
  EXPECT_STREQ(back, message);
  EXPECT_STREQ(shared, "the parent's original bytes");  // our copy is untouched

  ASSERT_EQ(write(go[1], "x", 1), 1);
  close(go[1]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
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

}  // namespace
}  // namespace rpma_sim
