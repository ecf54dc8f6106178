// peer_cfg_descriptor_fuzzer.cc -- libFuzzer target: a peer configuration's descriptor as a peer
// sends it, through the public API: rpma_peer_cfg_from_descriptor, then its getters, then
// rpma_peer_cfg_delete.
//
// Invariants (api/peer_cfg.cc, librpma 1.3): the descriptor is one byte, any nonzero value meaning
// "direct write to pmem"; an empty one is refused with RPMA_E_INVAL and nothing allocated;
// otherwise the flag reads back as that byte said, the configuration's own descriptor is that
// canonical byte (0 or 1), and the delete frees it.
#include <librpma.h>
#include <stdint.h>

#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  struct rpma_peer_cfg* cfg = nullptr;
  int ret = rpma_peer_cfg_from_descriptor(data, size, &cfg);
  if (size == 0) {
    FUZZ_CHECK(ret == RPMA_E_INVAL && cfg == nullptr);
    return 0;
  }
  FUZZ_CHECK(ret == 0 && cfg != nullptr);
  bool direct = !data[0];
  FUZZ_CHECK(rpma_peer_cfg_get_direct_write_to_pmem(cfg, &direct) == 0);
  FUZZ_CHECK(direct == (data[0] != 0));
  size_t descriptor_size = 0;
  FUZZ_CHECK(rpma_peer_cfg_get_descriptor_size(cfg, &descriptor_size) == 0);
  FUZZ_CHECK(descriptor_size == 1);
  uint8_t descriptor = 0xff;
  FUZZ_CHECK(rpma_peer_cfg_get_descriptor(cfg, &descriptor) == 0);
  FUZZ_CHECK(descriptor == (data[0] != 0 ? 1 : 0));
  FUZZ_CHECK(rpma_peer_cfg_delete(&cfg) == 0 && cfg == nullptr);
  return 0;
}
