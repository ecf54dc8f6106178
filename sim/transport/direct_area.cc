// direct_area.cc -- publishing regions, finding them again, and the placement records of
// a connection's direct area.
#include "sim/transport/direct_area.h"

#include <string.h>

#include <algorithm>
#include <thread>

#include "sim/common/ranges.h"
#include "sim/transport/process_gone.h"

namespace rpma_sim {
namespace {

// Where `rkey`'s probe sequence starts.
size_t HomeSlot(uint32_t rkey) { return (rkey >> 8) % DirectArea::kRegions; }

}  // namespace

bool DirectArea::Publish(uint32_t rkey, uint64_t addr, uint64_t length, uint32_t access,
                         const FileBacking* file) {
  DirectRegion* free_slot = nullptr;
  for (size_t i = 0; i < kRegions; ++i) {
    DirectRegion& entry = regions[(HomeSlot(rkey) + i) % kRegions];
    uint32_t state = entry.state.load();
    if ((state & 1) != 0 && entry.rkey.load() == rkey) return true;
    if ((state & 1) == 0 && free_slot == nullptr) free_slot = &entry;
    if (state == 0) break;  // never used: the probe of any key stops here
  }
  if (free_slot == nullptr) return false;
  // Even (not valid) while the fields change; odd once they hold.
  free_slot->rkey.store(rkey, std::memory_order_relaxed);
  free_slot->access.store(access, std::memory_order_relaxed);
  free_slot->addr.store(addr, std::memory_order_relaxed);
  free_slot->length.store(length, std::memory_order_relaxed);
  size_t path_length =
      file != nullptr && file->path.size() <= sizeof(free_slot->path) ? file->path.size() : 0;
  free_slot->path_length.store(static_cast<uint32_t>(path_length), std::memory_order_relaxed);
  if (path_length > 0) {
    free_slot->file_offset.store(file->offset, std::memory_order_relaxed);
    free_slot->file_device.store(file->device, std::memory_order_relaxed);
    free_slot->file_inode.store(file->inode, std::memory_order_relaxed);
    free_slot->held_from.store(std::min(file->held_from, length), std::memory_order_relaxed);
    free_slot->held_length.store(
        std::min(file->held_length, length - std::min(file->held_from, length)),
        std::memory_order_relaxed);
    for (size_t word = 0; word * 8 < path_length; ++word) {
      uint64_t bytes = 0;
      memcpy(&bytes, file->path.data() + word * 8, std::min<size_t>(8, path_length - word * 8));
      free_slot->path[word].store(bytes, std::memory_order_relaxed);
    }
  }
  free_slot->state.fetch_add(1);
  return true;
}

bool DirectArea::Withdraw(uint32_t rkey) {
  for (size_t i = 0; i < kRegions; ++i) {
    DirectRegion& entry = regions[(HomeSlot(rkey) + i) % kRegions];
    uint32_t state = entry.state.load();
    if (state == 0) break;
    if ((state & 1) != 0 && entry.rkey.load() == rkey) {
      entry.state.fetch_add(1);  // sequentially consistent: before the wait for in_use
      return true;
    }
  }
  return false;
}

bool WaitForZero(const std::atomic<uint32_t>& count, std::chrono::milliseconds timeout,
                 int holder) {
  // A copy takes microseconds; one still under way after kSpin is stopped, descheduled, or
  // its process is gone, and the thread waiting (the progress engine, often) sleeps.
  constexpr std::chrono::microseconds kSpin{200};
  constexpr std::chrono::microseconds kNap{200};
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + timeout;
  while (count.load() != 0) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return ProcessGone(holder);  // its accesses ended with it
    if (now - start < kSpin) {
      std::this_thread::yield();
      continue;
    }
    if (ProcessGone(holder)) return true;  // its accesses ended with it
    std::this_thread::sleep_for(kNap);
  }
  return true;
}

bool DirectArea::WaitIdle(std::chrono::milliseconds timeout, int initiator) {
  return WaitForZero(in_use, timeout, initiator);
}

bool DirectArea::ReadPlacements(
    const std::function<void(uint32_t, uint64_t, uint64_t, uint64_t, uint64_t)>& visit,
    uint32_t* yields_left) {
  uint64_t read = placements_read.load(std::memory_order_relaxed);
  uint64_t written = placements_written.load(std::memory_order_acquire);
  if (written - read > kPlacements) return false;
  for (; read != written; ++read) {
    DirectPlacement& record = placements[read % kPlacements];
    // The initiator grows a record for a few stores at most; one that stays held (a peer
    // descheduled, or lying) is left for the next call rather than waited for.
    uint32_t expected = DirectPlacement::kFree;
    while (!record.claim.compare_exchange_strong(expected, DirectPlacement::kTaken)) {
      if (expected != DirectPlacement::kGrowing || *yields_left == 0) break;
      --*yields_left;
      expected = DirectPlacement::kFree;
      std::this_thread::yield();
    }
    if (expected != DirectPlacement::kFree && expected != DirectPlacement::kTaken) break;
    visit(
        record.rkey.load(std::memory_order_relaxed), record.offset.load(std::memory_order_relaxed),
        record.length.load(std::memory_order_relaxed), record.first.load(std::memory_order_relaxed),
        record.last.load(std::memory_order_relaxed));
  }
  placements_read.store(read, std::memory_order_release);
  return true;
}

bool DirectArea::Find(uint32_t rkey, uint64_t address, uint64_t length, uint32_t access_needed,
                      DirectGrant* grant) const {
  for (size_t i = 0; i < kRegions; ++i) {
    size_t slot = (HomeSlot(rkey) + i) % kRegions;
    const DirectRegion& entry = regions[slot];
    uint32_t state = entry.state.load(std::memory_order_acquire);
    if (state == 0) return false;
    if ((state & 1) == 0 || entry.rkey.load(std::memory_order_relaxed) != rkey) continue;
    uint64_t start = entry.addr.load(std::memory_order_relaxed);
    uint64_t size = entry.length.load(std::memory_order_relaxed);
    uint32_t access = entry.access.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (entry.state.load(std::memory_order_relaxed) != state) return false;  // changing
    if (!RangeWithin(start, size, address, length) || (access & access_needed) != access_needed)
      return false;
    grant->slot = static_cast<uint32_t>(slot);
    grant->state = state;
    grant->region_addr = start;
    grant->region_length = size;
    return true;
  }
  return false;
}

bool DirectArea::FileOf(const DirectGrant& grant, FileBacking* file) const {
  const DirectRegion& entry = regions[grant.slot % kRegions];
  size_t path_length = entry.path_length.load(std::memory_order_relaxed);
  if (path_length == 0 || path_length > sizeof(entry.path)) return false;
  char path[sizeof(entry.path)];
  for (size_t word = 0; word * 8 < path_length; ++word) {
    uint64_t bytes = entry.path[word].load(std::memory_order_relaxed);
    memcpy(path + word * 8, &bytes, 8);
  }
  file->path.assign(path, path_length);
  file->offset = entry.file_offset.load(std::memory_order_relaxed);
  file->device = entry.file_device.load(std::memory_order_relaxed);
  file->inode = entry.file_inode.load(std::memory_order_relaxed);
  file->held_from = entry.held_from.load(std::memory_order_relaxed);
  file->held_length = entry.held_length.load(std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_acquire);
  return entry.state.load(std::memory_order_relaxed) == grant.state;
}

bool DirectArea::StillGranted(const DirectGrant& grant) const {
  return open.load() == kOpen && regions[grant.slot % kRegions].state.load() == grant.state;
}

bool DirectArea::HasPlacementRoom() const {
  uint64_t written = placements_written.load(std::memory_order_relaxed);
  return written - placements_read.load(std::memory_order_acquire) < kPlacements;
}

bool DirectArea::RecordPlacement(uint32_t rkey, uint64_t offset, uint64_t length,
                                 uint64_t ordinal) {
  uint64_t written = placements_written.load(std::memory_order_relaxed);
  if (written != placements_read.load(std::memory_order_acquire)) {
    // The last record is not read yet: grow it if the target does not take it meanwhile.
    DirectPlacement& last = placements[(written - 1) % kPlacements];
    uint32_t expected = DirectPlacement::kFree;
    if (last.claim.compare_exchange_strong(expected, DirectPlacement::kGrowing)) {
      uint64_t start = last.offset.load(std::memory_order_relaxed);
      uint64_t end = start + last.length.load(std::memory_order_relaxed);
      bool touches = last.rkey.load(std::memory_order_relaxed) == rkey && offset <= end &&
                     start <= offset + length;
      if (touches) {
        uint64_t new_start = std::min(start, offset);
        last.offset.store(new_start, std::memory_order_relaxed);
        last.length.store(std::max(end, offset + length) - new_start, std::memory_order_relaxed);
        last.last.store(ordinal, std::memory_order_relaxed);
      }
      last.claim.store(DirectPlacement::kFree, std::memory_order_release);
      if (touches) return false;
    }
  }
  DirectPlacement& record = placements[written % kPlacements];
  record.rkey.store(rkey, std::memory_order_relaxed);
  record.offset.store(offset, std::memory_order_relaxed);
  record.length.store(length, std::memory_order_relaxed);
  record.first.store(ordinal, std::memory_order_relaxed);
  record.last.store(ordinal, std::memory_order_relaxed);
  record.claim.store(DirectPlacement::kFree, std::memory_order_relaxed);
  placements_written.store(written + 1, std::memory_order_release);
  uint64_t unread = written + 1 - placements_read.load(std::memory_order_acquire);
  return unread % kNoticeEvery == 0;
}

}  // namespace rpma_sim
