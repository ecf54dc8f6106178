// Tests of PeerMappings (sim/verbs/direct_request): what an initiator maps of the region
// files a peer publishes in its direct area. The peer writes that area (any bytes, any
// time): whatever it publishes, the process it talks to must keep its address space, and
// its own files, for itself. The "peer" here is a DirectArea in this process's memory,
// filled as a hostile peer fills its own.
#include "sim/verbs/direct_request.h"

#include <fcntl.h>
#include <infiniband/verbs.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "sim/transport/direct_area.h"
#include "sim/transport/file_backing.h"

namespace rpma_sim {
namespace {

// A sparse file in /dev/shm (tmpfs keeps no blocks for its holes), removed when it goes.
class SparseFile {
 public:
  explicit SparseFile(uint64_t size) {
    std::random_device random;
    char name[96];
    snprintf(name, sizeof(name), "/dev/shm/rev-shmproto-sparse-%d-%08x", static_cast<int>(getpid()),
             static_cast<unsigned>(random()));
    path_ = name;
    fd_ = open(path_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd_ >= 0 && ftruncate(fd_, static_cast<off_t>(size)) != 0) {
      close(fd_);
      fd_ = -1;
    }
  }
  ~SparseFile() {
    if (fd_ >= 0) close(fd_);
    unlink(path_.c_str());
  }
  bool ok() const { return fd_ >= 0; }
  FileBacking Backing() const {
    struct stat status;
    fstat(fd_, &status);
    FileBacking file;
    file.path = path_;
    file.offset = 0;
    file.device = status.st_dev;
    file.inode = status.st_ino;
    file.held_from = 0;
    file.held_length = static_cast<uint64_t>(status.st_size);
    return file;
  }

 private:
  std::string path_;
  int fd_ = -1;
};

// Whether this process can still reserve `bytes` of address space (nothing committed).
bool CanReserve(size_t bytes) {
  void* at = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (at == MAP_FAILED) return false;
  munmap(at, bytes);
  return true;
}

// A peer publishes regions of up to 32 TiB, every one "held" by one sparse file of its own
// (the largest first, then halves of it, down to 1 GiB); the application writes 8 bytes to
// each. The initiator maps each region's whole file range (the length the peer chose), not
// the bytes it moves, so the 64 entries of one direct area take all of the process's address
// space (47 bits, 128 TiB, on x86-64): after them the application cannot even reserve 1 GiB.
// The peer's lie must cost this process a bounded amount of address space, or be refused.
TEST(PeerMappingsTest, APeerPublishingHugeRegionFilesCannotExhaustTheAddressSpace) {
  constexpr uint64_t kLargest = uint64_t{32} << 40;  // 32 TiB
  constexpr uint64_t kSmallest = uint64_t{1} << 30;  // 1 GiB
  constexpr uint64_t kRegionAddress = uint64_t{1} << 40;
  ASSERT_TRUE(CanReserve(size_t{1} << 30)) << "this process has no room to begin with";
  SparseFile file(kLargest);
  ASSERT_TRUE(file.ok()) << "cannot make a sparse 32 TiB file in /dev/shm";

  auto area = std::make_unique<DirectArea>();  // zeroed: an empty, closed area
  auto mappings = std::make_unique<PeerMappings>();
  uint64_t size = kLargest;
  uint64_t mapped_bytes = 0;
  int mapped = 0;
  for (size_t slot = 0; slot < DirectArea::kRegions && size >= kSmallest; ++slot) {
    FileBacking backing = file.Backing();
    backing.held_length = size;
    const uint32_t rkey = static_cast<uint32_t>(slot) << 8;  // HomeSlot: a slot of its own
    ASSERT_TRUE(area->Publish(rkey, kRegionAddress, size, IBV_ACCESS_REMOTE_WRITE, &backing));
    DirectGrant grant;
    ASSERT_TRUE(area->Find(rkey, kRegionAddress, 8, IBV_ACCESS_REMOTE_WRITE, &grant));
    if (mappings->Get(*area, grant, 0, 8, getpid()) != nullptr) {
      ++mapped;
      mapped_bytes += size;
    } else {
      size /= 2;  // no room for that much: the next entry asks for half
    }
  }
  // Checked before the mappings go (then asserted: gtest's report needs memory).
  const bool room_left = CanReserve(size_t{1} << 30);
  mappings.reset();
  printf("8-byte writes to %d published regions mapped %llu GiB of this process\n", mapped,
         static_cast<unsigned long long>(mapped_bytes >> 30));
  EXPECT_TRUE(room_left) << "after the initiator mapped what the peer published for " << mapped
                         << " writes of 8 bytes (" << (mapped_bytes >> 30)
                         << " GiB), this process cannot reserve 1 GiB of address space";
}

// A memfd of this process's, as a peer's published region file (fd, device, inode right).
class OwnMemfd {
 public:
  OwnMemfd() : fd_(memfd_create("peer-mappings-test", MFD_CLOEXEC)) {
    if (fd_ >= 0 && ftruncate(fd_, kSize) != 0) {
      close(fd_);
      fd_ = -1;
    }
  }
  ~OwnMemfd() {
    if (fd_ >= 0) close(fd_);
  }
  bool ok() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  // Its backing, named by `path`.
  FileBacking Named(const std::string& path) const {
    struct stat status;
    fstat(fd_, &status);
    FileBacking file;
    file.path = path;
    file.device = status.st_dev;
    file.inode = status.st_ino;
    file.held_length = kSize;
    return file;
  }
  static constexpr uint64_t kSize = 4096;

 private:
  int fd_;
};

// Whether the initiator maps the file `file` names for a region that process `owner`
// publishes.
bool Maps(const FileBacking& file, int owner) {
  constexpr uint64_t kRegionAddress = uint64_t{1} << 40;
  auto area = std::make_unique<DirectArea>();
  PeerMappings mappings;
  if (!area->Publish(1 << 8, kRegionAddress, file.held_length, IBV_ACCESS_REMOTE_WRITE, &file))
    return false;
  DirectGrant grant;
  if (!area->Find(1 << 8, kRegionAddress, 8, IBV_ACCESS_REMOTE_WRITE, &grant)) return false;
  return mappings.Get(*area, grant, 0, 8, owner) != nullptr;
}

// A memfd is reached through /proc/<owner>/fd/<n> and no other way: a peer must not make this
// process map a file or memfd of its own (its /proc/self, its pid, or a link out of the
// peer's /proc entry), where the writes it meant for the peer would land.
TEST(PeerMappingsTest, APathThroughProcMustBeADescriptorOfThePeers) {
  OwnMemfd memfd;
  ASSERT_TRUE(memfd.ok());
  const std::string fd = std::to_string(memfd.fd());
  const std::string self = std::to_string(getpid());
  // This process as the peer: its own descriptor is the peer's, and maps.
  EXPECT_TRUE(Maps(memfd.Named("/proc/" + self + "/fd/" + fd), getpid()));
  // The same descriptor published by another process (the parent stands for it).
  EXPECT_FALSE(Maps(memfd.Named("/proc/" + self + "/fd/" + fd), getppid()));
  EXPECT_FALSE(Maps(memfd.Named("/proc/self/fd/" + fd), getppid()));
  EXPECT_FALSE(Maps(memfd.Named("/proc/thread-self/fd/" + fd), getppid()));
  const std::string parent = std::to_string(getppid());
  EXPECT_FALSE(Maps(memfd.Named("/proc/" + parent + "/root/proc/self/fd/" + fd), getppid()));
  EXPECT_FALSE(Maps(memfd.Named("/proc/" + parent + "/fd/../../" + self + "/fd/" + fd), getppid()));
}

}  // namespace
}  // namespace rpma_sim
