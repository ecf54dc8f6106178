// mr.cc -- rpma_mr_*: local memory registration, usage bits to access rights, and the
// 21-byte little-endian descriptor (u64 address, u64 length, u32 rkey, u8 usage).
#include <librpma.h>
#include <string.h>

#include <new>

#include "api/api_prologue.h"
#include "api/fault_point.h"
#include "api/inherited.h"
#include "api/status_map.h"
#include "api/types.h"

namespace {

constexpr int kUsageAllAllowed = 0xFF;
constexpr size_t kMrDescriptorSize = 2 * sizeof(uint64_t) + sizeof(uint32_t) + sizeof(uint8_t);

// librpma's rpma_peer_usage2access (the portable flush path needs remote read).
int UsageToAccess(int usage) {
  int access = 0;
  if (usage & (RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |
               RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT))
    access |= IBV_ACCESS_REMOTE_READ;
  if (usage & (RPMA_MR_USAGE_READ_DST | RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_RECV))
    access |= IBV_ACCESS_LOCAL_WRITE;
  if (usage & RPMA_MR_USAGE_WRITE_DST) access |= IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
  return access;
}

void StoreLe(uint8_t* dst, uint64_t value, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) dst[i] = static_cast<uint8_t>(value >> (8 * i));
}

uint64_t LoadLe(const uint8_t* src, size_t bytes) {
  uint64_t value = 0;
  for (size_t i = 0; i < bytes; ++i) value |= static_cast<uint64_t>(src[i]) << (8 * i);
  return value;
}

}  // namespace

int rpma_mr_reg(struct rpma_peer* peer, void* ptr, size_t size, int usage,
                struct rpma_mr_local** mr_ptr) {
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_NOMEM, "rpma_mr_reg");
  if (peer == nullptr || ptr == nullptr || size == 0 || mr_ptr == nullptr) return RPMA_E_INVAL;
  if (usage == 0 || (usage & ~kUsageAllAllowed) != 0) return RPMA_E_INVAL;
  if (Inherited(*peer, __func__, "peer")) return RPMA_E_PROVIDER;
  RPMA_FAULT_POINT(RPMA_E_PROVIDER, "rpma_peer_setup_mr_reg");
  auto* mr = new (std::nothrow) rpma_mr_local;
  if (mr == nullptr) return RPMA_E_NOMEM;
  rpma_sim::Status status = peer->pd->RegisterMemory(ptr, size, UsageToAccess(usage), &mr->region);
  if (status != rpma_sim::Status::kOk) {
    delete mr;
    return ToRpmaError(status);
  }
  mr->pd = peer->pd;
  mr->usage = usage;
  *mr_ptr = mr;
  return 0;
}

int rpma_mr_dereg(struct rpma_mr_local** mr_ptr) {
  RPMA_API_PROLOGUE_ENDING(rpma_mr_dereg(mr_ptr));  // frees it whatever the result
  if (mr_ptr == nullptr) return RPMA_E_INVAL;
  rpma_mr_local* mr = *mr_ptr;
  if (mr == nullptr) return 0;
  if (Inherited(*mr, __func__, "registered memory")) {
    KeepInherited(mr);  // stays registered in the parent
    *mr_ptr = nullptr;
    return RPMA_E_PROVIDER;
  }
  mr->pd->DeregisterMemory(mr->region);
  delete mr;
  *mr_ptr = nullptr;
  RPMA_FAULT_POINT(RPMA_E_PROVIDER, "rpma_mr_dereg");
  return 0;
}

int rpma_mr_get_descriptor(const struct rpma_mr_local* mr, void* desc) {
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_mr_get_descriptor");
  if (mr == nullptr || desc == nullptr) return RPMA_E_INVAL;
  auto* out = static_cast<uint8_t*>(desc);
  StoreLe(out, reinterpret_cast<uint64_t>(mr->region->addr), 8);
  StoreLe(out + 8, mr->region->length, 8);
  StoreLe(out + 16, mr->region->rkey, 4);
  out[20] = static_cast<uint8_t>(mr->usage);
  return 0;
}

int rpma_mr_get_descriptor_size(const struct rpma_mr_local* mr, size_t* desc_size) {
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_mr_get_descriptor_size");
  if (mr == nullptr || desc_size == nullptr) return RPMA_E_INVAL;
  *desc_size = kMrDescriptorSize;
  return 0;
}

int rpma_mr_get_ptr(const struct rpma_mr_local* mr, void** ptr) {
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_mr_get_ptr");
  if (mr == nullptr || ptr == nullptr) return RPMA_E_INVAL;
  *ptr = mr->region->addr;
  return 0;
}

int rpma_mr_get_size(const struct rpma_mr_local* mr, size_t* size) {
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_mr_get_size");
  if (mr == nullptr || size == nullptr) return RPMA_E_INVAL;
  *size = mr->region->length;
  return 0;
}

int rpma_mr_advise(struct rpma_mr_local* mr, size_t offset, size_t len, int advice,
                   uint32_t flags) {
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_PROVIDER, "rpma_mr_advise");
  if (mr != nullptr && Inherited(*mr, __func__, "registered memory")) return RPMA_E_PROVIDER;
  // Prefetching is a no-op for simulated memory; librpma has no argument checks here.
  return 0;
}

int rpma_mr_remote_from_descriptor(const void* desc, size_t desc_size,
                                   struct rpma_mr_remote** mr_ptr) {
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_mr_remote_from_descriptor");
  if (desc == nullptr || mr_ptr == nullptr || desc_size < kMrDescriptorSize) return RPMA_E_INVAL;
  const auto* in = static_cast<const uint8_t*>(desc);
  uint8_t usage = in[20];
  if (usage == 0) return RPMA_E_INVAL;
  auto* mr = new (std::nothrow) rpma_mr_remote;
  if (mr == nullptr) return RPMA_E_NOMEM;
  mr->raddr = LoadLe(in, 8);
  mr->size = LoadLe(in + 8, 8);
  mr->rkey = static_cast<uint32_t>(LoadLe(in + 16, 4));
  mr->usage = usage;
  *mr_ptr = mr;
  return 0;
}

int rpma_mr_remote_get_size(const struct rpma_mr_remote* mr, size_t* size) {
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_mr_remote_get_size");
  if (mr == nullptr || size == nullptr) return RPMA_E_INVAL;
  *size = mr->size;
  return 0;
}

int rpma_mr_remote_get_flush_type(const struct rpma_mr_remote* mr, int* flush_type) {
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_mr_remote_get_flush_type");
  if (mr == nullptr || flush_type == nullptr) return RPMA_E_INVAL;
  *flush_type =
      mr->usage & (RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY);
  return 0;
}

int rpma_mr_remote_delete(struct rpma_mr_remote** mr_ptr) {
  RPMA_API_PROLOGUE_ENDING(rpma_mr_remote_delete(mr_ptr));  // frees it whatever the result
  if (mr_ptr == nullptr) return RPMA_E_INVAL;
  if (*mr_ptr == nullptr) return 0;
  delete *mr_ptr;
  *mr_ptr = nullptr;
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_mr_remote_delete");
  return 0;
}
