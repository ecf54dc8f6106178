// Tests of GuardedCopy (sim/common/guarded_copy): copies reach private pages past their
// protection, report which side could not be reached (unmapped pages, a file truncated
// under its mapping), and leave every other fault to the handler installed before them.
#include "sim/common/guarded_copy.h"

#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace rpma_sim {
namespace {

constexpr size_t kPage = 4096;

// Three private pages, 0x11 each, the middle one given `protection`, or (kGone) made a
// page that is no longer there: a shared mapping of an empty file, which faults (SIGBUS)
// and which the kernel cannot reach either, as an unmapped page. (Not an unmapped hole:
// the process's next small mapping, a thread's or a sanitizer's, may be placed in it, and
// the tests would write into that.)
class GuardedCopyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    void* mapped =
        mmap(nullptr, 3 * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(MAP_FAILED, mapped);
    area_ = static_cast<uint8_t*>(mapped);
    memset(area_, 0x11, 3 * kPage);
    bytes_.assign(3 * kPage, 0x77);
  }
  void TearDown() override { munmap(area_, 3 * kPage); }

  static constexpr int kGone = -1;

  void Middle(int protection) {
    if (protection != kGone) {
      ASSERT_EQ(0, mprotect(area_ + kPage, kPage, protection));
      return;
    }
    int empty = memfd_create("guarded_copy_test", MFD_CLOEXEC);
    ASSERT_GE(empty, 0);
    void* gone =
        mmap(area_ + kPage, kPage, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, empty, 0);
    close(empty);
    ASSERT_EQ(area_ + kPage, gone);
  }

  uint8_t* area_ = nullptr;
  std::vector<uint8_t> bytes_;
};

TEST_F(GuardedCopyTest, CopiesBetweenAccessibleMemory) {
  EXPECT_EQ(CopyResult::kCopied, GuardedCopy(area_ + 10, bytes_.data(), 3 * kPage - 20));
  EXPECT_EQ(0x11, area_[9]);
  EXPECT_EQ(0x77, area_[10]);
  EXPECT_EQ(0x77, area_[3 * kPage - 11]);
  EXPECT_EQ(0x11, area_[3 * kPage - 10]);
  EXPECT_EQ(CopyResult::kCopied, GuardedCopy(area_, bytes_.data(), 0));
}

// A device writes into pinned pages whatever their protection: so does the copy.
TEST_F(GuardedCopyTest, WritesPagesMadeReadOnly) {
  ASSERT_NO_FATAL_FAILURE(Middle(PROT_READ));
  ASSERT_EQ(CopyResult::kCopied, GuardedCopy(area_ + 100, bytes_.data(), 2 * kPage));
  for (size_t i = 0; i < 3 * kPage; ++i)
    ASSERT_EQ(i >= 100 && i < 100 + 2 * kPage ? 0x77 : 0x11, area_[i]) << "byte " << i;
  // The protection stays the application's: a probe that writes would still fault.
  EXPECT_EQ(CopyResult::kCopied, GuardedCopy(area_ + kPage, bytes_.data(), 8));
}

TEST_F(GuardedCopyTest, ReadsAndWritesPagesMadeInaccessible) {
  ASSERT_NO_FATAL_FAILURE(Middle(PROT_NONE));
  std::vector<uint8_t> read(2 * kPage, 0);
  ASSERT_EQ(CopyResult::kCopied, GuardedCopy(read.data(), area_ + 100, 2 * kPage));
  EXPECT_EQ(std::vector<uint8_t>(2 * kPage, 0x11), read);
  ASSERT_EQ(CopyResult::kCopied, GuardedCopy(area_ + kPage, bytes_.data(), kPage));
  ASSERT_EQ(0, mprotect(area_ + kPage, kPage, PROT_READ));
  EXPECT_EQ(0x77, area_[kPage]);
  EXPECT_EQ(0x77, area_[2 * kPage - 1]);
}

TEST_F(GuardedCopyTest, PagesGoneAreUnreachableOnTheirSide) {
  ASSERT_NO_FATAL_FAILURE(Middle(kGone));
  EXPECT_EQ(CopyResult::kTargetUnreachable, GuardedCopy(area_ + 100, bytes_.data(), 2 * kPage));
  EXPECT_EQ(CopyResult::kSourceUnreachable, GuardedCopy(bytes_.data(), area_ + 100, 2 * kPage));
  EXPECT_EQ(CopyResult::kTargetUnreachable,
            GuardedStore64(reinterpret_cast<uint64_t*>(area_ + kPage + 8), 42));
  // Both sides gone: whichever the copy touched first.
  EXPECT_NE(CopyResult::kCopied, GuardedCopy(area_ + kPage, area_ + kPage + 64, 64));
  // The thread goes on, and faults again as often as it copies.
  for (int i = 0; i < 100; ++i)
    ASSERT_EQ(CopyResult::kTargetUnreachable, GuardedCopy(area_ + kPage, bytes_.data(), 1));
  EXPECT_EQ(CopyResult::kCopied, GuardedCopy(area_, bytes_.data(), kPage));
}

TEST_F(GuardedCopyTest, ReadAsDeviceGivesZerosForWhatItCannotRead) {
  ASSERT_NO_FATAL_FAILURE(Middle(kGone));
  EXPECT_EQ(std::vector<uint8_t>(kPage, 0), ReadAsDevice(area_ + kPage, kPage));
  EXPECT_EQ(std::vector<uint8_t>(16, 0x11), ReadAsDevice(area_ + 16, 16));
}

// A file the application truncated under its shared mapping raises SIGBUS: unreachable.
TEST_F(GuardedCopyTest, ATruncatedFileIsUnreachable) {
  const char* dir = getenv("TEST_TMPDIR");
  std::string path = std::string(dir != nullptr ? dir : "/tmp") + "/guarded_copy.XXXXXX";
  int fd = mkstemp(&path[0]);
  ASSERT_GE(fd, 0);
  unlink(path.c_str());
  ASSERT_EQ(0, ftruncate(fd, 2 * kPage));
  void* mapped = mmap(nullptr, 2 * kPage, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ASSERT_NE(MAP_FAILED, mapped);
  uint8_t* file = static_cast<uint8_t*>(mapped);
  ASSERT_EQ(0, ftruncate(fd, kPage));
  EXPECT_EQ(CopyResult::kCopied, GuardedCopy(file, bytes_.data(), kPage));
  EXPECT_EQ(CopyResult::kTargetUnreachable, GuardedCopy(file + kPage, bytes_.data(), 16));
  std::vector<uint8_t> read(16);
  EXPECT_EQ(CopyResult::kSourceUnreachable, GuardedCopy(read.data(), file + kPage, 16));
  munmap(mapped, 2 * kPage);
  close(fd);
}

// Copies on many threads at once, some faulting: each thread's fault ends its own copy.
TEST_F(GuardedCopyTest, ThreadsFaultIndependently) {
  ASSERT_NO_FATAL_FAILURE(Middle(kGone));
  std::vector<std::thread> threads;
  std::vector<int> wrong(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      std::vector<uint8_t> local(kPage, static_cast<uint8_t>(t));
      for (int i = 0; i < 200; ++i) {
        bool fault = (i + t) % 2 == 0;
        CopyResult result =
            GuardedCopy(fault ? area_ + kPage : local.data(), fault ? local.data() : area_, 64);
        if (result != (fault ? CopyResult::kTargetUnreachable : CopyResult::kCopied)) ++wrong[t];
      }
    });
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(std::vector<int>(4, 0), wrong);
}

void OwnHandler(int, siginfo_t*, void*) { _exit(7); }

// A fault outside a copy goes to the handler installed before the guard; the copies'
// faults never reach it. (In a process of its own, where the guard comes second.)
TEST(GuardedCopyChainTest, OtherFaultsReachTheEarlierHandler) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        struct sigaction own;
        sigemptyset(&own.sa_mask);
        own.sa_flags = SA_SIGINFO;
        own.sa_sigaction = OwnHandler;
        if (sigaction(SIGSEGV, &own, nullptr) != 0) _exit(1);
        InstallCopyGuard();
        // A page that is gone (GuardedCopyTest::Middle) and faults with SIGSEGV: no access.
        int empty = memfd_create("guarded_copy_test", MFD_CLOEXEC);
        void* mapped = mmap(nullptr, kPage, PROT_NONE, MAP_SHARED, empty, 0);
        if (mapped == MAP_FAILED) _exit(2);
        uint8_t byte = 1;
        if (GuardedCopy(mapped, &byte, 1) != CopyResult::kTargetUnreachable) _exit(3);
        *static_cast<volatile uint8_t*>(mapped) = 1;  // the application's own fault
        _exit(4);
      },
      ::testing::ExitedWithCode(7), "");
}

}  // namespace
}  // namespace rpma_sim
