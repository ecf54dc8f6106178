// peer_cfg.cc -- rpma_peer_cfg_*: the direct-write-to-pmem flag and its 1-byte descriptor.
#include <librpma.h>

#include <new>

#include "api/api_prologue.h"
#include "api/fault_point.h"
#include "api/types.h"

namespace {
// One thread at a time may use a peer configuration (one_thread.h).
constexpr char kWhat[] = "peer configuration";
}  // namespace

int rpma_peer_cfg_new(struct rpma_peer_cfg** pcfg_ptr) {
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_NOMEM, "rpma_peer_cfg_new");
  if (pcfg_ptr == nullptr) return RPMA_E_INVAL;
  auto* cfg = new (std::nothrow) rpma_peer_cfg;
  if (cfg == nullptr) return RPMA_E_NOMEM;
  *pcfg_ptr = cfg;
  return 0;
}

int rpma_peer_cfg_delete(struct rpma_peer_cfg** pcfg_ptr) {
  RPMA_API_PROLOGUE_ENDING(rpma_peer_cfg_delete(pcfg_ptr));  // frees it whatever the result
  if (pcfg_ptr == nullptr) return RPMA_E_INVAL;
  if (*pcfg_ptr != nullptr && !MayEnd(**pcfg_ptr, __func__, kWhat)) return RPMA_E_INVAL;
  delete *pcfg_ptr;
  *pcfg_ptr = nullptr;
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_peer_cfg_delete");
  return 0;
}

int rpma_peer_cfg_set_direct_write_to_pmem(struct rpma_peer_cfg* pcfg, bool supported) {
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_peer_cfg_set_direct_write_to_pmem");
  if (pcfg == nullptr) return RPMA_E_INVAL;
  CallOn counted(*pcfg, __func__, kWhat, Sharing::kOneThread);
  pcfg->direct_write_to_pmem = supported;
  return 0;
}

int rpma_peer_cfg_get_direct_write_to_pmem(const struct rpma_peer_cfg* pcfg, bool* supported) {
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_peer_cfg_get_direct_write_to_pmem");
  if (pcfg == nullptr || supported == nullptr) return RPMA_E_INVAL;
  CallOn counted(*pcfg, __func__, kWhat, Sharing::kOneThread);
  *supported = pcfg->direct_write_to_pmem;
  return 0;
}

int rpma_peer_cfg_get_descriptor(const struct rpma_peer_cfg* pcfg, void* desc) {
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_peer_cfg_get_descriptor");
  if (pcfg == nullptr || desc == nullptr) return RPMA_E_INVAL;
  // librpma reads the flag through its own getter, whose result it ignores.
  (void)RPMA_FAULT_FIRES(RPMA_E_INVAL, "rpma_peer_cfg_get_direct_write_to_pmem");
  CallOn counted(*pcfg, __func__, kWhat, Sharing::kOneThread);
  *static_cast<uint8_t*>(desc) = pcfg->direct_write_to_pmem ? 1 : 0;
  return 0;
}

int rpma_peer_cfg_get_descriptor_size(const struct rpma_peer_cfg* pcfg, size_t* desc_size) {
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_peer_cfg_get_descriptor_size");
  if (pcfg == nullptr || desc_size == nullptr) return RPMA_E_INVAL;
  *desc_size = sizeof(uint8_t);
  return 0;
}

int rpma_peer_cfg_from_descriptor(const void* desc, size_t desc_size,
                                  struct rpma_peer_cfg** pcfg_ptr) {
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_peer_cfg_from_descriptor");
  if (desc == nullptr || pcfg_ptr == nullptr || desc_size < sizeof(uint8_t)) return RPMA_E_INVAL;
  auto* cfg = new (std::nothrow) rpma_peer_cfg;
  if (cfg == nullptr) return RPMA_E_NOMEM;
  cfg->direct_write_to_pmem = *static_cast<const uint8_t*>(desc) != 0;
  *pcfg_ptr = cfg;
  return 0;
}
