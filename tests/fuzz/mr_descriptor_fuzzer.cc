// mr_descriptor_fuzzer.cc -- libFuzzer target: a remote memory region's descriptor as a peer sends
// it (usually in private data), through the public
// API: rpma_mr_remote_from_descriptor, then its getters, then rpma_mr_remote_delete.
//
// Invariants (api/mr.cc, librpma 1.3): a descriptor is 21 bytes, little-endian (u64 address, u64
// length, u32 rkey, u8 usage); one that is shorter or has no usage is refused with RPMA_E_INVAL and
// nothing allocated; otherwise the getters give back exactly its length and its usage's flush bits,
// and the delete frees it (a leak fails the run).
#include <librpma.h>
#include <stdint.h>

#include "tests/fuzz/fuzz_check.h"

namespace {

constexpr size_t kDescriptorSize = 21;

uint64_t LoadLe64(const uint8_t* bytes) {
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value |= static_cast<uint64_t>(bytes[i]) << (8 * i);
  return value;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  struct rpma_mr_remote* mr = nullptr;
  int ret = rpma_mr_remote_from_descriptor(data, size, &mr);
  if (size < kDescriptorSize || data[20] == 0) {
    FUZZ_CHECK(ret == RPMA_E_INVAL && mr == nullptr);
    return 0;
  }
  FUZZ_CHECK(ret == 0 && mr != nullptr);
  size_t length = 0;
  FUZZ_CHECK(rpma_mr_remote_get_size(mr, &length) == 0);
  FUZZ_CHECK(length == LoadLe64(data + 8));
  int flush_type = -1;
  FUZZ_CHECK(rpma_mr_remote_get_flush_type(mr, &flush_type) == 0);
  FUZZ_CHECK(flush_type == (data[20] & (RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT |
                                        RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY)));
  FUZZ_CHECK(rpma_mr_remote_delete(&mr) == 0 && mr == nullptr);
  return 0;
}
