// Tests of MappingGuard (sim/transport/mapping_guard): a shared file mapping whose file is
// truncated under it reads zeros and takes writes instead of raising SIGBUS while guarded;
// the guard says so; an unguarded one still dies of SIGBUS; guards are reused.
#include "sim/transport/mapping_guard.h"

#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memory>
#include <string>

#include <gtest/gtest.h>

namespace rpma_sim {
namespace {

constexpr size_t kPages = 4;

// A file of kPages pages, filled with 0x5A, mapped shared.
class MappingGuardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    page_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const char* dir = getenv("TEST_TMPDIR");
    std::string path = std::string(dir != nullptr ? dir : "/tmp") + "/mapping_guard.XXXXXX";
    fd_ = mkstemp(&path[0]);
    ASSERT_GE(fd_, 0);
    unlink(path.c_str());
    ASSERT_EQ(0, ftruncate(fd_, static_cast<off_t>(kPages * page_)));
    void* mapped = mmap(nullptr, kPages * page_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    ASSERT_NE(MAP_FAILED, mapped);
    base_ = static_cast<volatile uint8_t*>(mapped);
    for (size_t i = 0; i < kPages * page_; ++i) base_[i] = 0x5A;
  }

  void TearDown() override {
    if (base_ != nullptr) munmap(const_cast<uint8_t*>(base_), kPages * page_);
    if (fd_ >= 0) close(fd_);
  }

  size_t page_ = 0;
  int fd_ = -1;
  volatile uint8_t* base_ = nullptr;
};

TEST_F(MappingGuardTest, AnUntouchedMappingIsNotTruncated) {
  MappingGuard guard(const_cast<uint8_t*>(base_), kPages * page_);
  EXPECT_TRUE(guard.guarded());
  EXPECT_EQ(0x5A, base_[3 * page_]);
  EXPECT_FALSE(guard.truncated());
}

TEST_F(MappingGuardTest, PagesTheFileLostReadZerosAndTheGuardSaysSo) {
  MappingGuard guard(const_cast<uint8_t*>(base_), kPages * page_);
  ASSERT_EQ(0, ftruncate(fd_, static_cast<off_t>(page_)));  // the peer truncates it
  EXPECT_EQ(0x5A, base_[page_ - 1]);                        // still in the file
  EXPECT_FALSE(guard.truncated());
  EXPECT_EQ(0, base_[2 * page_ + 5]);  // gone: would raise SIGBUS
  EXPECT_TRUE(guard.truncated());
  base_[3 * page_] = 7;  // a write goes to the private page, not to the file
  EXPECT_EQ(7, base_[3 * page_]);
  EXPECT_EQ(0x5A, base_[0]);
}

TEST_F(MappingGuardTest, EveryGuardOfTheRangeLearnsIt) {
  MappingGuard first(const_cast<uint8_t*>(base_), kPages * page_);
  MappingGuard second(const_cast<uint8_t*>(base_), kPages * page_);
  ASSERT_EQ(0, ftruncate(fd_, 0));
  EXPECT_EQ(0, base_[0]);
  EXPECT_TRUE(first.truncated());
  EXPECT_TRUE(second.truncated());
}

TEST_F(MappingGuardTest, AReleasedSlotIsReusedUntruncated) {
  {
    MappingGuard guard(const_cast<uint8_t*>(base_), kPages * page_);
    ASSERT_EQ(0, ftruncate(fd_, 0));
    EXPECT_EQ(0, base_[page_]);
    EXPECT_TRUE(guard.truncated());
  }
  for (int i = 0; i < 3 * MappingGuard::kSlots / 2; ++i) {
    MappingGuard guard(const_cast<uint8_t*>(base_), page_);
    ASSERT_TRUE(guard.guarded()) << i;
    ASSERT_FALSE(guard.truncated()) << i;
  }
}

TEST_F(MappingGuardTest, AnUnguardedMappingStillDiesOfSigbus) {
  { MappingGuard installs_the_handler(const_cast<uint8_t*>(base_), page_); }
  ASSERT_EQ(0, ftruncate(fd_, 0));
  // Killed by SIGBUS, or (under a sanitizer, whose handler came before the guard's and gets
  // the signal from it) aborted with a report: either way not swallowed.
  auto died = [](int status) {
    return WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) != 0);
  };
  EXPECT_EXIT(
      {
        (void)base_[2 * page_];
        _exit(0);
      },
      died, "");
}

}  // namespace
}  // namespace rpma_sim
