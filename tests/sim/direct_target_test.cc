// direct_target_test.cc -- what a direct-access target (sim/verbs/direct_target.h) publishes
// in its side's direct area when its connection starts: every region of its domain that a
// peer may write or read, each with the file that maps it, which the peer then maps itself.
// A server registers its memory before its first client, so the first start is where such a
// region's file is found.
#include "sim/verbs/direct_target.h"

#include <fcntl.h>
#include <infiniband/verbs.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/fabric/device.h"
#include "sim/transport/direct_area.h"
#include "sim/transport/file_backing.h"
#include "sim/verbs/memory_region.h"
#include "sim/verbs/protection_domain.h"

namespace rpma_sim {
namespace {

constexpr size_t kLength = 2 * 4096;
constexpr int kRemoteAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;

class DirectTargetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(Status::kOk, ProtectionDomain::Allocate(Device::Get(), &pd_));
    ASSERT_EQ(Status::kOk, ShmSegment::Create(ShmSegment::kMinRingCapacity, &segment_));
  }
  void TearDown() override {
    target_.reset();
    for (const auto& region : regions_) MemoryRegionTable::Get().Deregister(region);
    regions_.clear();
  }

  // Registers [addr, addr + kLength) in the domain (no target is told: none has started).
  const MemoryRegion& Register(void* addr) {
    regions_.push_back(MemoryRegionTable::Get().Register(pd_.get(), addr, kLength, kRemoteAccess));
    return *regions_.back();
  }

  // The file the area publishes for `region`: false if it publishes none (or not the region).
  bool Published(const MemoryRegion& region, FileBacking* file) {
    DirectGrant grant;
    const DirectArea& area = segment_->own_direct();
    const uint64_t address = reinterpret_cast<uintptr_t>(region.addr);
    EXPECT_TRUE(area.Find(region.rkey, address, kLength, IBV_ACCESS_REMOTE_WRITE, &grant))
        << "the region is not published";
    return area.FileOf(grant, file);
  }

  std::shared_ptr<ProtectionDomain> pd_;
  std::shared_ptr<ShmSegment> segment_;
  std::vector<std::shared_ptr<MemoryRegion>> regions_;
  std::shared_ptr<DirectTarget> target_;
};

// A shared mapping of a file (as persistent memory is) registered before the first start is
// published with its file; private memory registered the same way with none.
TEST_F(DirectTargetTest, RegionsRegisteredBeforeTheFirstStartArePublishedWithTheirFiles) {
  char path[] = "/dev/shm/rpma-sim-direct-target-test-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(0, ftruncate(fd, kLength));
  void* shared = mmap(nullptr, kLength, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ASSERT_NE(MAP_FAILED, shared);
  void* private_pages =
      mmap(nullptr, kLength, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(MAP_FAILED, private_pages);
  const MemoryRegion& of_file = Register(shared);
  const MemoryRegion& of_private = Register(private_pages);

  target_ = DirectTarget::Start(segment_, pd_.get(), 1);

  FileBacking file;
  EXPECT_TRUE(Published(of_file, &file));
  struct stat status;
  ASSERT_EQ(0, fstat(fd, &status));
  EXPECT_EQ(std::string(path), file.path);
  EXPECT_EQ(static_cast<uint64_t>(status.st_ino), file.inode);
  EXPECT_EQ(0u, file.offset);
  EXPECT_EQ(0u, file.held_from);
  EXPECT_EQ(kLength, file.held_length);
  FileBacking none;
  EXPECT_FALSE(Published(of_private, &none));

  TearDown();
  munmap(shared, kLength);
  munmap(private_pages, kLength);
  close(fd);
  unlink(path);
}

}  // namespace
}  // namespace rpma_sim
