// shm_segment_fuzzer.cc -- libFuzzer target: a shared-memory segment as the server finds it when it
// takes a client's offer (sim/transport/shm_segment.h). The client wrote the header and can
// scribble on the rings' counters at any time, so the server checks the header
// (ShmSegment::CheckHeader, as ShmSegment::Open does) and then reads the client's ring and writes
// its own as ShmStream does, through ShmRing's checks alone.
//
// Input: one byte choosing the size of the mapping (a ring capacity 64 KiB << (b % 8), one page
// more when b >= 128), the header (ShmSegment::HeaderSize() bytes), then bytes for the start of the
// client-to-server ring's data. The offer's nonce is kOfferedNonce.
//
// The mapping is exactly the size the server would map, page-aligned as a mapping is: ASan reports
// any access outside it, so a check that lets an index through shows up here. Invariants: a ring
// never claims more readable bytes than it holds; a read takes exactly what it claims (all of it
// when asked for more), a peek sees what a read then takes, and a write takes what fits and nothing
// when the ring is corrupt or its consumer closed.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include <algorithm>
#include <map>
#include <memory>
#include <vector>

#include "sim/transport/frame.h"
#include "sim/transport/shm_ring.h"
#include "sim/transport/shm_segment.h"
#include "tests/fuzz/fuzz_check.h"

namespace rpma_sim {
namespace {

constexpr uint64_t kOfferedNonce = 0x6e6f6e63652d3031;  // make_corpus.cc writes the same

// Zeroed memory of exactly `size` bytes, aligned as a mapping is (the header's counters are 64-byte
// aligned). One allocation per size, kept from input to input: a fresh one of a segment's size
// costs a mmap and a munmap under ASan, which made the target 20 times slower.
uint8_t* MapZeroes(size_t size) {
  static auto* mappings = new std::map<size_t, std::unique_ptr<uint8_t, decltype(&free)>>;
  auto it = mappings->find(size);
  if (it == mappings->end()) {
    void* bytes = nullptr;
    FUZZ_CHECK(posix_memalign(&bytes, 4096, size) == 0);
    auto owned = std::unique_ptr<uint8_t, decltype(&free)>(static_cast<uint8_t*>(bytes), &free);
    it = mappings->emplace(size, std::move(owned)).first;
  }
  memset(it->second.get(), 0, size);
  return it->second.get();
}

// The server's reads of the client's ring: a frame header peeked, then everything taken.
void ReadAsServer(ShmRing& ring) {
  const int64_t readable = ring.Readable();
  FUZZ_CHECK(readable >= -1 && readable <= static_cast<int64_t>(ring.capacity()));
  uint8_t header[kFrameHeaderSize];
  const bool peeked = ring.Peek(header, sizeof(header));
  FUZZ_CHECK(peeked == (readable >= static_cast<int64_t>(sizeof(header))));
  // Room for one byte more than the ring claims: a read takes what is there, no more.
  std::vector<uint8_t> taken(std::max<int64_t>(readable, sizeof(header)) + 1);
  ssize_t first = ring.TryRead(taken.data(), sizeof(header));
  if (readable < 0) {
    FUZZ_CHECK(first == -1);
    FUZZ_CHECK(!ring.ArmConsumerDoorbell());
    return;
  }
  FUZZ_CHECK(first == std::min<int64_t>(readable, sizeof(header)));
  ssize_t rest = ring.TryRead(taken.data() + first, taken.size() - first);
  FUZZ_CHECK(first + rest == readable);
  FUZZ_CHECK(!peeked || memcmp(taken.data(), header, sizeof(header)) == 0);
  FUZZ_CHECK(ring.Readable() == 0);
  FUZZ_CHECK(ring.ArmConsumerDoorbell() == !ring.producer_closed());
  ring.TakeProducerDoorbell();
}

// The server's write of a frame to its own ring, whose counters the client can also spoil.
void WriteAsServer(ShmRing& ring) {
  const int64_t used = ring.Readable();
  std::vector<uint8_t> body(4096, 0x5a);
  uint8_t header[kFrameHeaderSize];
  EncodeFrameHeader(FrameType::kResponse, static_cast<uint32_t>(body.size()), header);
  iovec parts[2] = {{header, sizeof(header)}, {body.data(), body.size()}};
  const ssize_t written = ring.TryWrite(parts, 2);
  if (used < 0 || ring.consumer_closed()) {
    FUZZ_CHECK(written == -1);
    return;
  }
  const size_t space = ring.capacity() - static_cast<size_t>(used);
  FUZZ_CHECK(written == static_cast<ssize_t>(std::min(space, sizeof(header) + body.size())));
  FUZZ_CHECK(ring.Readable() == used + written);
  ring.TakeConsumerDoorbell();
  ring.ArmProducerDoorbell();
}

}  // namespace
}  // namespace rpma_sim

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rpma_sim;
  const size_t header_size = ShmSegment::HeaderSize();
  if (size < 1 + header_size) return 0;
  const size_t claimed_capacity = ShmSegment::kMinRingCapacity << (data[0] % 8);
  const size_t mapped = ShmSegment::SizeFor(claimed_capacity) + (data[0] >= 128 ? 4096 : 0);
  // The check reads the header alone: only an accepted segment is mapped whole.
  uint8_t* header = MapZeroes(header_size);
  memcpy(header, data + 1, header_size);
  const size_t capacity = ShmSegment::CheckHeader(header, mapped, kOfferedNonce);
  if (capacity == 0) return 0;
  FUZZ_CHECK(capacity >= ShmSegment::kMinRingCapacity && capacity <= ShmSegment::kMaxRingCapacity);
  FUZZ_CHECK(ShmSegment::SizeFor(capacity) == mapped);
  uint8_t* segment = MapZeroes(mapped);
  memcpy(segment, header, header_size);
  // The rings' data: client to server, then server to client, at the end of the segment.
  uint8_t* client_to_server = segment + mapped - 2 * capacity;
  const size_t ring_bytes = std::min(size - 1 - header_size, capacity);
  memcpy(client_to_server, data + 1 + header_size, ring_bytes);
  ShmRing inbound = ShmSegment::RingOf(segment, capacity, ShmSegment::kClient);
  ShmRing outbound = ShmSegment::RingOf(segment, capacity, ShmSegment::kServer);
  ReadAsServer(inbound);
  WriteAsServer(outbound);
  return 0;
}
