// shm_segment.cc -- creating, opening, checking and removing connection segments.
#include "sim/transport/shm_segment.h"
#include "sim/common/mutex.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <map>
#include <thread>

#include "sim/common/fork_generation.h"
#include "sim/common/log.h"
#include "sim/common/per_process.h"
#include "sim/fabric/config.h"
#include "sim/transport/process_vm.h"

namespace rpma_sim {

namespace bip = boost::interprocess;

constexpr uint64_t kSegmentMagic = 0x314d48534d535052;  // "RPSMSHM1"
constexpr uint32_t kSegmentVersion = 6;
// Room for every request of a full queue carrying a 4 KiB payload inline (its frame's
// header included). More only lets a sender run further ahead of its peer; a ring smaller
// than what is under way makes the sender wait for room, never fail, and every page of it
// is taken from /dev/shm at connect.
constexpr size_t kRingBytesPerRequest = (4 << 10) + 64;

struct SegmentHeader {
  uint64_t magic;
  uint32_t version;
  uint32_t ring_capacity;
  uint64_t nonce;
  std::atomic<int32_t> pid[2];                 // indexed by ShmSegment::Side
  std::atomic<uint64_t> base[2];               // where each side mapped the segment
  std::atomic<uint32_t> reaches_peer[2];       // side i may move bytes in and out of the other
  std::atomic<uint32_t> named_peer[2];         // side i named the other its ptracer (Yama)
  std::atomic<uint32_t> references_open[2];    // side i's buffers may be named (1 at first)
  std::atomic<uint32_t> references_in_use[2];  // copies to or from side i's buffers under way
  std::atomic<uint64_t> probe[2];              // side i's last token, read back by process_vm
  RingControl ring[2];                         // ring[kClient] carries client -> server (last)
};

namespace {

constexpr size_t PageRounded(size_t size) { return (size + 4095) / 4096 * 4096; }

// After the header's page: each side's direct area (indexed by Side: side i's memory as the
// other side reaches it), then the rings.
constexpr size_t kDirectOffset = PageRounded(sizeof(SegmentHeader));
constexpr size_t kDataOffset = kDirectOffset + PageRounded(2 * sizeof(DirectArea));

DirectArea* DirectAreaOf(void* mapping, int side) {
  return reinterpret_cast<DirectArea*>(static_cast<uint8_t*>(mapping) + kDirectOffset) + side;
}

size_t SegmentSize(size_t ring_capacity) { return kDataOffset + 2 * ring_capacity; }

bool ValidRingCapacity(size_t capacity) {
  return capacity >= ShmSegment::kMinRingCapacity && capacity <= ShmSegment::kMaxRingCapacity &&
         capacity % 4096 == 0;
}

std::atomic<uint32_t> g_counter{0};

// The segments mapped in this process, by name and side, with their mapping: lets ProbePeer
// tell a connection within this process from a peer that only claims this process's pid,
// and lets a server in the process of its client use the client's mapping (one mapping,
// the same addresses for both sides: the rings' release and acquire are then on the same
// atomics for ThreadSanitizer too, not on two aliases it cannot relate).
struct OpenSegmentTable {
  Mutex mutex;
  std::map<std::pair<std::string, int>, std::weak_ptr<bip::mapped_region>> segments;  // by mutex
};
// A fork child's are its own: it inherits the parent's mappings, never its segments.
PerProcess<OpenSegmentTable> g_open;

// This process's mapping of `name` made by its creator, if it has one.
std::shared_ptr<bip::mapped_region> MappingInThisProcess(const std::string& name) {
  OpenSegmentTable& open = g_open.Get();
  MutexLock lock(&open.mutex);
  auto it = open.segments.find({name, ShmSegment::kClient});
  return it == open.segments.end() ? nullptr : it->second.lock();
}

// 64 bits from the kernel's random source (getrandom: one short system call; a
// std::random_device costs ~40 us to construct where CPUID traps to the hypervisor).
uint64_t RandomBits() {
  uint64_t bits = 0;
  ssize_t n;
  do {
    n = getrandom(&bits, sizeof(bits), 0);
  } while (n < 0 && errno == EINTR);
  // Not enough (no getrandom before Linux 3.17): the clock and the counter still make the
  // name unique in this process, and the nonce is checked together with it.
  if (n != static_cast<ssize_t>(sizeof(bits)))
    bits ^= static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  return bits;
}

// "rpma-sim-<pid>-<counter>-<random>": the pid says whose it is (for people; RemoveStale
// goes by the creator's lock).
std::string NewName() {
  char name[96];
  snprintf(name, sizeof(name), "%s%d-%u-%08x", ShmSegment::kNamePrefix, static_cast<int>(getpid()),
           g_counter.fetch_add(1), static_cast<uint32_t>(RandomBits()));
  return name;
}

// The creator's pid in a name we made (as its pid namespace saw it), or 0 if `name` is not
// one of ours.
int CreatorOf(const std::string& name) {
  size_t prefix = strlen(ShmSegment::kNamePrefix);
  if (name.compare(0, prefix, ShmSegment::kNamePrefix) != 0) return 0;
  int pid = 0;
  size_t i = prefix;
  for (; i < name.size() && isdigit(static_cast<unsigned char>(name[i])); ++i) {
    if (pid > 99999999) return 0;  // more digits than any pid has (and than an int holds)
    pid = pid * 10 + (name[i] - '0');
  }
  if (i == prefix || i >= name.size() || name[i] != '-' || name.size() > 64) return 0;
  for (char c : name)
    if (!isalnum(static_cast<unsigned char>(c)) && c != '-') return 0;
  return pid;
}

}  // namespace

size_t ShmSegment::HeaderSize() { return sizeof(SegmentHeader); }

size_t ShmSegment::SizeFor(size_t ring_capacity) { return SegmentSize(ring_capacity); }

void ShmSegment::InitHeader(void* mapping, size_t ring_capacity, uint64_t nonce) {
  // The header's atomics start life here; the rest of a new segment is zeroes, which is an
  // empty, closed direct area: its objects begin without a store (default-initialized), so
  // that their 12 pages are not touched (and faulted in) until a side uses them.
  auto* header = new (mapping) SegmentHeader{};
  for (int side = 0; side < 2; ++side) new (DirectAreaOf(mapping, side)) DirectArea;
  header->magic = kSegmentMagic;
  header->version = kSegmentVersion;
  header->ring_capacity = static_cast<uint32_t>(ring_capacity);
  header->nonce = nonce;
}

size_t ShmSegment::CheckHeader(const void* mapping, size_t size, uint64_t nonce) {
  const auto* header = static_cast<const SegmentHeader*>(mapping);
  // Read once: the creator could change it after the check.
  const size_t ring_capacity = header->ring_capacity;
  if (header->magic != kSegmentMagic || header->version != kSegmentVersion ||
      header->nonce != nonce || !ValidRingCapacity(ring_capacity) ||
      size != SegmentSize(ring_capacity))
    return 0;
  return ring_capacity;
}

bool ShmSegment::ReadHeader(const void* bytes, HeaderView* view) {
  const auto* header = static_cast<const SegmentHeader*>(bytes);
  if (header->magic != kSegmentMagic || header->version != kSegmentVersion) return false;
  view->nonce = header->nonce;
  for (int side : {kClient, kServer}) {
    view->pid[side] = header->pid[side].load();
    view->reaches_peer[side] = header->reaches_peer[side].load() != 0;
    view->named_peer[side] = header->named_peer[side].load() != 0;
  }
  return true;
}

ShmRing ShmSegment::RingOf(void* mapping, size_t ring_capacity, Side from) {
  auto* header = static_cast<SegmentHeader*>(mapping);
  uint8_t* data = static_cast<uint8_t*>(mapping) + kDataOffset + from * ring_capacity;
  return ShmRing(&header->ring[from], data, ring_capacity);
}

size_t ShmSegment::RingCapacityFor(uint32_t queue_depth) {
  size_t capacity = kMinRingCapacity;
  while (capacity < kMaxRingCapacity && capacity < queue_depth * kRingBytesPerRequest)
    capacity *= 2;
  return capacity;
}

ShmSegment::ShmSegment(std::string name, Side side, std::shared_ptr<bip::mapped_region> region,
                       size_t ring_capacity)
    : name_(std::move(name)),
      side_(side),
      region_(std::move(region)),
      guard_(new MappingGuard(region_->get_address(), region_->get_size())) {
  void* base = region_->get_address();
  header_ = static_cast<SegmentHeader*>(base);
  own_direct_ = DirectAreaOf(base, side);
  peer_direct_ = DirectAreaOf(base, 1 - side);
  inbound_ = RingOf(base, ring_capacity, side == kClient ? kServer : kClient);
  outbound_ = RingOf(base, ring_capacity, side);
  header_->pid[side].store(getpid());
  header_->base[side].store(reinterpret_cast<uintptr_t>(base));
  header_->references_open[side].store(1);
  OpenSegmentTable& open = g_open.Get();
  MutexLock lock(&open.mutex);
  open.segments[{name_, side_}] = region_;
}

ShmSegment::~ShmSegment() {
  {
    OpenSegmentTable& open = g_open.Get();
    MutexLock lock(&open.mutex);
    open.segments.erase({name_, side_});
  }
  // Whoever is still reading our direction learns that nothing more comes.
  outbound_.CloseAsProducer();
  inbound_.CloseAsConsumer();
  Unlink();
  if (permit_ == PermitOutcome::kGranted) PtracePermits::Get().Release(permit_pid_);
}

Status ShmSegment::Create(size_t ring_capacity, std::shared_ptr<ShmSegment>* out) {
  if (!ValidRingCapacity(ring_capacity)) return Status::kInvalid;
  RemoveStaleNowAndThen();
  std::string name = NewName();
  std::unique_ptr<bip::shared_memory_object> object;
  try {
    bip::permissions owner_only(0600);
    {
      // A fork child must not hold the creator's lock (nor the name alive) for the parent.
      CloseOnForkSection section;
      object = std::make_unique<bip::shared_memory_object>(bip::create_only, name.c_str(),
                                                           bip::read_write, owner_only);
      MarkCloseOnFork(object->get_mapping_handle().handle);
    }
    if (flock(object->get_mapping_handle().handle, LOCK_SH) != 0)
      throw bip::interprocess_exception("cannot lock the new segment");
    // Taken now, so that a full /dev/shm is this call's error and not a SIGBUS later. It
    // sets the size too (no truncate first).
    int error;
    do {
      error = posix_fallocate(object->get_mapping_handle().handle, 0,
                              static_cast<off_t>(SegmentSize(ring_capacity)));
    } while (error == EINTR);
    if (error != 0)
      throw bip::interprocess_exception(error == ENOSPC ? "no room left in /dev/shm"
                                                        : strerror(error));
    bip::mapped_region region(*object, bip::read_write, 0, SegmentSize(ring_capacity));
    InitHeader(region.get_address(), ring_capacity, RandomBits());
    out->reset(new ShmSegment(
        name, kClient, std::make_shared<bip::mapped_region>(std::move(region)), ring_capacity));
    ShmSegment& made = **out;
    MutexLock lock(&made.object_mutex_);
    made.object_ = std::move(object);
  } catch (const bip::interprocess_exception& error) {
    SIM_LOG_WARNING("cannot create shared memory segment %s: %s", name.c_str(), error.what());
    {
      CloseOnForkSection section;
      if (object) ForgetCloseOnFork(object->get_mapping_handle().handle);
      object.reset();
    }
    bip::shared_memory_object::remove(name.c_str());
    return Status::kProvider;
  }
  return Status::kOk;
}

Status ShmSegment::Open(const std::string& name, uint64_t nonce, std::shared_ptr<ShmSegment>* out) {
  if (CreatorOf(name) == 0) {
    SIM_LOG_ERROR("shared memory segment name '%s' is not one of rpma-sim's", name.c_str());
    return Status::kProvider;
  }
  try {
    bip::shared_memory_object object(bip::open_only, name.c_str(), bip::read_write);
    struct stat status;
    // Nothing is mapped that no offer could be: a header's worth at least, and no more than
    // the largest rings need.
    if (fstat(object.get_mapping_handle().handle, &status) != 0 ||
        status.st_size < static_cast<off_t>(kDataOffset) ||
        status.st_size > static_cast<off_t>(SizeFor(kMaxRingCapacity))) {
      SIM_LOG_ERROR("shared memory segment %s has the wrong size", name.c_str());
      return Status::kProvider;
    }
    if (status.st_uid != geteuid()) {
      // Another user's segment: sharing memory (and process_vm) across users is refused.
      SIM_LOG_ERROR("shared memory segment %s belongs to another user", name.c_str());
      return Status::kProvider;
    }
    const size_t size = static_cast<size_t>(status.st_size);
    std::shared_ptr<bip::mapped_region> region = MappingInThisProcess(name);
    if (!region) region = std::make_shared<bip::mapped_region>(object, bip::read_write, 0, size);
    // The peer may have truncated it since its size was read: the check reads zeros then.
    MappingGuard checking(region->get_address(), region->get_size());
    const size_t ring_capacity = CheckHeader(region->get_address(), size, nonce);
    if (ring_capacity == 0 || checking.truncated()) {
      SIM_LOG_ERROR("shared memory segment %s is not the one offered", name.c_str());
      return Status::kProvider;
    }
    out->reset(new ShmSegment(name, kServer, std::move(region), ring_capacity));
  } catch (const bip::interprocess_exception& error) {
    // Another host (or another /dev/shm): the offer cannot be taken.
    SIM_LOG_INFO("cannot open shared memory segment %s: %s", name.c_str(), error.what());
    return Status::kProvider;
  }
  (*out)->Unlink();
  return Status::kOk;
}

namespace {

// Whether the segment `name` was left by a creator that is gone: nobody holds its lock, and
// it is older than kStaleAfterSeconds.
bool IsStale(const std::string& name) {
  try {
    bip::shared_memory_object object(bip::open_only, name.c_str(), bip::read_only);
    int fd = object.get_mapping_handle().handle;
    struct stat status;
    if (fstat(fd, &status) != 0 || time(nullptr) - status.st_mtime < ShmSegment::kStaleAfterSeconds)
      return false;
    return flock(fd, LOCK_EX | LOCK_NB) == 0;  // released when `object` closes
  } catch (const bip::interprocess_exception&) {
    return false;  // gone meanwhile, or not ours to open
  }
}

}  // namespace

void ShmSegment::RemoveStaleNowAndThen() {
  // A segment turns stale kStaleAfterSeconds after its creator died at the earliest, so
  // looking more often finds nothing more; and each look reads all of /dev/shm.
  static std::atomic<int64_t> last_look_s{-kStaleAfterSeconds};
  int64_t now_s = std::chrono::duration_cast<std::chrono::seconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count();
  int64_t last = last_look_s.load();
  if (now_s - last < kStaleAfterSeconds || !last_look_s.compare_exchange_strong(last, now_s))
    return;
  RemoveStale();
}

int ShmSegment::RemoveStale() {
  DIR* dir = opendir("/dev/shm");
  if (dir == nullptr) return 0;
  int removed = 0;
  while (dirent* entry = readdir(dir)) {
    std::string name = entry->d_name;
    int creator = CreatorOf(name);
    if (creator <= 0 || !IsStale(name)) continue;
    if (bip::shared_memory_object::remove(name.c_str())) {
      SIM_LOG_INFO("removed stale shared memory segment %s (its creator, process %d, is gone)",
                   name.c_str(), creator);
      ++removed;
    }
  }
  closedir(dir);
  return removed;
}

void ShmSegment::Unlink() {
  if (unlinked_.exchange(true)) return;
  bip::shared_memory_object::remove(name_.c_str());
  MutexLock lock(&object_mutex_);
  CloseOnForkSection section;
  if (object_) ForgetCloseOnFork(object_->get_mapping_handle().handle);
  object_.reset();  // closes the fd, and with it the lock
}

uint64_t ShmSegment::nonce() const { return header_->nonce; }

bool ShmSegment::ProbePeer() {
  int pid = header_->pid[1 - side_].load();
  uint64_t base = header_->base[1 - side_].load();
  bool believable = pid > 0;
  if (pid == getpid()) {
    OpenSegmentTable& open = g_open.Get();
    MutexLock lock(&open.mutex);
    believable = open.segments.count({name_, 1 - side_}) != 0;
  }
  // Named under Yama once (Grant checks that the pid, which the peer wrote, is the peer's).
  bool other_process = believable && pid != getpid();
  if (other_process && ShmProcessVmEnabled() && permit_ == PermitOutcome::kNotNeeded) {
    permit_ = PtracePermits::Get().Grant(pid, name_);
    if (permit_ == PermitOutcome::kGranted) {
      permit_pid_ = pid;
      header_->named_peer[side_].store(1);
    }
  }
  peer_pid_ = believable ? pid : 0;
  peer_base_ = base;
  return ProbeReach();
}

bool ShmSegment::ProbeReach() {
  bool reaches = false;
  if (peer_pid_ != 0 && ShmProcessVmEnabled()) {
    // The peer wrote both its pid and its mapping's address: another process (one this one
    // may copy to and from) would have every copy by reference go there. Believed only if
    // that process's memory there is this very segment: it shows the token just written
    // into it, which no other process can have.
    const uint64_t token = RandomBits();
    header_->probe[side_].store(token);
    const uint64_t at = peer_base_ + (reinterpret_cast<uintptr_t>(&header_->probe[side_]) -
                                      reinterpret_cast<uintptr_t>(header_));
    uint64_t magic = 0, seen = 0;
    reaches = ReadFromProcess(peer_pid_, peer_base_, &magic, sizeof(magic)) &&
              magic == kSegmentMagic && ReadFromProcess(peer_pid_, at, &seen, sizeof(seen));
    if (reaches && seen != token) {
      reaches = false;
      SIM_LOG_WARNING("segment %s: process %d does not map it at 0x%" PRIx64
                      ", as the peer's header says: no copies by reference to it",
                      name_.c_str(), peer_pid_, peer_base_);
    }
  }
  we_reach_peer_.store(reaches, std::memory_order_release);
  header_->reaches_peer[side_].store(reaches ? 1 : 0);
  return reaches;
}

bool ShmSegment::ProbeAgainIfNamed() {
  if (header_->named_peer[1 - side_].load(std::memory_order_acquire) == 0) return false;
  if (probed_again_.exchange(true)) return we_reach_peer_.load(std::memory_order_acquire);
  bool reaches = ProbeReach();
  if (reaches)
    SIM_LOG_INFO("process %d named this one under Yama: process_vm reaches it now", peer_pid_);
  return reaches;
}

template <typename Copy>
bool ShmSegment::WithPeerReferences(Copy copy) {
  if (!WeReachPeer()) return false;
  std::atomic<uint32_t>& in_use = header_->references_in_use[1 - side_];
  in_use.fetch_add(1);  // before the check: RevokeReferences then waits for this copy
  bool done = header_->references_open[1 - side_].load() != 0 && copy();
  in_use.fetch_sub(1);
  return done;
}

bool ShmSegment::ReadPeerMemory(uint64_t address, void* local, size_t length) {
  return WithPeerReferences([&] { return ReadFromProcess(peer_pid_, address, local, length); });
}

bool ShmSegment::WritePeerMemory(uint64_t address, const void* local, size_t length) {
  return WithPeerReferences([&] { return WriteToProcess(peer_pid_, address, local, length); });
}

void ShmSegment::RevokeReferences() {
  header_->references_open[side_].store(0);
  WaitForZero(header_->references_in_use[side_], std::chrono::seconds(1), peer_pid_);
}

bool ShmSegment::PeerReachesUs() const { return header_->reaches_peer[1 - side_].load() != 0; }

}  // namespace rpma_sim
