// region_payload.cc -- reading a request's bytes from its registered region while a wire
// sends them, or zeros once the region is gone.
#include "sim/verbs/region_payload.h"
#include "sim/common/mutex.h"

#include <sys/mman.h>

#include <utility>

namespace rpma_sim {

RegionPayload::RegionPayload(std::shared_ptr<MemoryRegion> region, uint64_t offset, size_t length)
    : region_(std::move(region)), offset_(offset), length_(length) {}

RegionPayload::~RegionPayload() {
  if (zeros_ != nullptr) munmap(zeros_, length_);
}

bool RegionPayload::WriteWith(const std::function<bool(const iovec* parts, int count)>& write) {
  // Once lost, lost for good: the byte after them may be what is left to send, and the
  // bytes already sent may be zeros.
  static const uint8_t kIntact = kPayloadIntact;
  static const uint8_t kLost = kPayloadLost;
  MutexLock lock(&mutex_);
  if (!lost_.load()) {
    ReaderLock table_lock(&MemoryRegionTable::Get().mutex());
    if (!revoked_ && MemoryRegionTable::Get().IsRegisteredLocked(*region_)) {
      iovec parts[2] = {{region_->addr + offset_, length_}, {const_cast<uint8_t*>(&kIntact), 1}};
      return write(parts, 2);
    }
    lost_.store(true);
  }
  const uint8_t* zeros = ZerosLocked();
  // Out of address space: the stream cannot go on with the frame, so it breaks (and the
  // connection ends), rather than the process.
  if (zeros == nullptr) return false;
  iovec parts[2] = {{const_cast<uint8_t*>(zeros), length_}, {const_cast<uint8_t*>(&kLost), 1}};
  return write(parts, 2);
}

const uint8_t* RegionPayload::ZerosLocked() {
  if (zeros_ == nullptr) {
    // Pages never written read as zeros and cost no memory: the kernel maps its zero page.
    void* zeros = mmap(nullptr, length_, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (zeros != MAP_FAILED) zeros_ = zeros;
  }
  return static_cast<const uint8_t*>(zeros_);
}

}  // namespace rpma_sim
