// region_payload.h -- a large write's or send's bytes sent over a wire straight from the
// requester's registered memory, as a NIC reads them when it transmits, instead of a copy
// made when the request was posted (one pass over the bytes fewer per request).
//
// The wire reads them under the memory-region table's shared lock, so a region
// deregistered meanwhile is never read afterwards; nor are the bytes of a queue pair that
// flushed its requests (Revoke waits for a send of them under way), whose application may
// free them. Pages the application unmapped under the request cannot be read either (the
// stream says so: ByteStream::WriteFromApplication). The frame has already announced its
// length, so bytes that cannot be read go as zeros, and the byte after them (PROTOCOL.md,
// "In place") tells the responder so: it places nothing and answers as it does in one
// process when the requester's buffer went away (IBV_WC_LOC_PROT_ERR for the requester).
#ifndef RPMA_SIM_VERBS_REGION_PAYLOAD_H_
#define RPMA_SIM_VERBS_REGION_PAYLOAD_H_

#include <stddef.h>
#include <stdint.h>

#include <atomic>
#include <memory>

#include "sim/common/mutex.h"
#include "sim/transport/frame_payload.h"
#include "sim/verbs/memory_region.h"

namespace rpma_sim {

// The byte after a payload sent in place.
constexpr uint8_t kPayloadIntact = 0;
constexpr uint8_t kPayloadLost = 1;

class RegionPayload : public FramePayload {
 public:
  // The `length` bytes at `offset` in `region`, which the requester checked just now.
  RegionPayload(std::shared_ptr<MemoryRegion> region, uint64_t offset, size_t length);
  ~RegionPayload() override;

  RegionPayload(const RegionPayload&) = delete;
  RegionPayload& operator=(const RegionPayload&) = delete;

  // The bytes and the byte after them.
  size_t size() const override { return length_ + 1; }
  bool WriteWith(const std::function<bool(const iovec* parts, int count)>& write) override;

  // Zeros from now on, and the responder told, as for a region deregistered meanwhile.
  bool GiveUpBytes() override {
    lost_.store(true);
    return true;
  }

  // The region is not read any more once this returns (the queue pair flushed the
  // request): waits for a WriteWith under way, which the stream bounds.
  void Revoke() {
    MutexLock lock(&mutex_);
    revoked_ = true;
  }

  // Whether the bytes went as zeros (or will).
  bool lost() const { return lost_.load(); }

 private:
  // length_ zero bytes, mapped the first time they are needed; null if they cannot be.
  const uint8_t* ZerosLocked() REQUIRES(mutex_);

  const std::shared_ptr<MemoryRegion> region_;
  const uint64_t offset_;
  const size_t length_;
  // Held while the bytes are handed to the stream: Revoke waits for it.
  Mutex mutex_;
  bool revoked_ GUARDED_BY(mutex_) = false;
  void* zeros_ GUARDED_BY(mutex_) = nullptr;
  std::atomic<bool> lost_{false};
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_VERBS_REGION_PAYLOAD_H_
