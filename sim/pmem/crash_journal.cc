// crash_journal.cc -- describing crash points, and a journal's file.
//
// The file, version 2, every integer little-endian:
//   "RPMASIMJ" u32 version
//   u64 node, u8 flags (1 persistent memory, 2 eADR, 4 flush scope qp, 8 truncated)
//   u64 first_point, string end_reason
//   u32 regions, then each: u32 key, u32 ordinal, u64 address, u64 length, string file,
//     u64 file_offset,
//     bytes final_image (its length is the region's)
//   u64 events, then each: u64 point, u8 kind, u64 placer, u64 first, u64 last, u8 by,
//     u8 flags (1 visibility flushed, 2 persistent), span range, bytes overwritten (a
//     placement's: the range's length), u32 spans, span made_durable..., u32 values,
//     value durable_values...
// where a string is u32 length + bytes, a span is u32 key, u64 begin, u64 end, a value is
// u32 key, u64 begin, u64 length + bytes, and bytes are raw. Version 1, the same without the
// values, is read too. A reader checks every length against what is left of the file.
#include "sim/pmem/crash_journal.h"

#include <inttypes.h>
#include <stdio.h>

#include <fstream>
#include <iterator>

namespace rpma_sim {
namespace {

constexpr char kMagic[8] = {'R', 'P', 'M', 'A', 'S', 'I', 'M', 'J'};
constexpr uint32_t kVersion = 2;
constexpr uint32_t kOldestVersion = 1;  // no durable values
// Past every address a process maps (the upper half is the kernel's).
constexpr uint64_t kHighestAddress = uint64_t{1} << 63;

class Writer {
 public:
  void U8(uint8_t value) { out_.push_back(static_cast<char>(value)); }
  void U32(uint32_t value) { Le(value, 4); }
  void U64(uint64_t value) { Le(value, 8); }
  void Bytes(const void* data, size_t size) { out_.append(static_cast<const char*>(data), size); }
  void String(const std::string& text) {
    U32(static_cast<uint32_t>(text.size()));
    Bytes(text.data(), text.size());
  }
  void Span(const CrashSpan& span) {
    U32(span.key);
    U64(span.begin);
    U64(span.end);
  }
  const std::string& out() const { return out_; }

 private:
  void Le(uint64_t value, int bytes) {
    for (int i = 0; i < bytes; ++i) out_.push_back(static_cast<char>(value >> (8 * i)));
  }
  std::string out_;
};

class Reader {
 public:
  explicit Reader(const std::string& in) : in_(in) {}

  bool U8(uint8_t* value) {
    uint64_t wide;
    if (!Le(1, &wide)) return false;
    *value = static_cast<uint8_t>(wide);
    return true;
  }
  bool U32(uint32_t* value) {
    uint64_t wide;
    if (!Le(4, &wide)) return false;
    *value = static_cast<uint32_t>(wide);
    return true;
  }
  bool U64(uint64_t* value) { return Le(8, value); }
  bool Bytes(size_t size, std::vector<uint8_t>* bytes) {
    if (size > in_.size() - at_) return false;
    bytes->assign(in_.begin() + at_, in_.begin() + at_ + size);
    at_ += size;
    return true;
  }
  bool String(std::string* text) {
    uint32_t size;
    if (!U32(&size) || size > in_.size() - at_) return false;
    text->assign(in_, at_, size);
    at_ += size;
    return true;
  }
  bool Span(CrashSpan* span) { return U32(&span->key) && U64(&span->begin) && U64(&span->end); }
  bool Value(CrashValue* value) {
    uint64_t length;
    return U32(&value->key) && U64(&value->begin) && U64(&length) && Bytes(length, &value->bytes);
  }
  size_t left() const { return in_.size() - at_; }

 private:
  bool Le(int bytes, uint64_t* value) {
    if (in_.size() - at_ < static_cast<size_t>(bytes)) return false;
    *value = 0;
    for (int i = 0; i < bytes; ++i)
      *value |= static_cast<uint64_t>(static_cast<uint8_t>(in_[at_ + i])) << (8 * i);
    at_ += bytes;
    return true;
  }
  const std::string& in_;
  size_t at_ = 0;
};

bool ReadEvent(Reader* in, uint32_t version, CrashEvent* event) {
  uint8_t kind, by, flags;
  uint32_t spans, values = 0;
  if (!in->U64(&event->point) || !in->U8(&kind) || !in->U64(&event->placement.placer) ||
      !in->U64(&event->placement.first) || !in->U64(&event->placement.last) || !in->U8(&by) ||
      !in->U8(&flags) || !in->Span(&event->range) || kind > 2 || by > 4 ||
      event->range.end < event->range.begin)
    return false;
  event->kind = static_cast<CrashEventKind>(kind);
  event->placement.by = static_cast<PlacedBy>(by);
  event->placement.visibility_flushed = flags & 1;
  event->persistent = flags & 2;
  // Journals written before the side was recorded have 0 there: unknown.
  const uint8_t side = (flags >> 2) & 3;
  if (side > static_cast<uint8_t>(CrashSide::kServer)) return false;
  event->side = static_cast<CrashSide>(side);
  const size_t overwritten =
      event->kind == CrashEventKind::kPlacement ? event->range.end - event->range.begin : 0;
  if (!in->Bytes(overwritten, &event->overwritten) || !in->U32(&spans)) return false;
  // Each span takes 20 bytes: a count larger than what is left is a lie.
  if (spans > in->left() / 20) return false;
  event->made_durable.resize(spans);
  for (CrashSpan& span : event->made_durable) {
    if (!in->Span(&span) || span.end < span.begin) return false;
  }
  if (version >= 2 && !in->U32(&values)) return false;
  // Each value takes at least 20 bytes.
  if (values > in->left() / 20) return false;
  event->durable_values.resize(values);
  for (CrashValue& value : event->durable_values) {
    if (!in->Value(&value)) return false;
  }
  return true;
}

}  // namespace

const char* PlacedByName(PlacedBy by) {
  switch (by) {
    case PlacedBy::kWrite:
      return "write";
    case PlacedBy::kWriteWithImm:
      return "write with imm";
    case PlacedBy::kAtomicWrite:
      return "atomic write";
    case PlacedBy::kSend:
      return "send";
    case PlacedBy::kSendWithImm:
      return "send with imm";
  }
  return "?";
}

std::string CrashEvent::Describe() const {
  char text[256];
  const uint64_t length = range.end - range.begin;
  switch (kind) {
    case CrashEventKind::kPlacement:
      snprintf(text, sizeof(text),
               "%s of %" PRIu64 " bytes at offset %" PRIu64 " of region 0x%" PRIx32
               " by work request %" PRIu64 " of queue pair %" PRIu64,
               PlacedByName(placement.by), length, range.begin, range.key, placement.first,
               placement.placer);
      break;
    case CrashEventKind::kFlush:
      snprintf(text, sizeof(text),
               "%s flush of %" PRIu64 " bytes at offset %" PRIu64 " of region 0x%" PRIx32
               " by work request %" PRIu64 " of queue pair %" PRIu64,
               persistent ? "persistent" : "visibility", length, range.begin, range.key,
               placement.first, placement.placer);
      break;
    case CrashEventKind::kPersist:
      snprintf(text, sizeof(text),
               "rpma_sim_persist of %" PRIu64 " bytes at offset %" PRIu64 " of region 0x%" PRIx32,
               length, range.begin, range.key);
      break;
  }
  return text;
}

const CrashRegion* CrashJournal::Region(uint32_t key) const {
  for (const CrashRegion& region : regions)
    if (region.key == key) return &region;
  return nullptr;
}

bool CrashJournal::WriteTo(const std::string& path, std::string* error) const {
  Writer out;
  out.Bytes(kMagic, sizeof(kMagic));
  out.U32(kVersion);
  out.U64(node);
  out.U8((persistent_memory ? 1 : 0) | (eadr ? 2 : 0) | (flush_scope_qp ? 4 : 0) |
         (truncated ? 8 : 0));
  out.U64(first_point);
  out.String(end_reason);
  out.U32(static_cast<uint32_t>(regions.size()));
  for (const CrashRegion& region : regions) {
    out.U32(region.key);
    out.U32(region.ordinal);
    out.U64(region.address);
    out.U64(region.length);
    out.String(region.file);
    out.U64(region.file_offset);
    out.Bytes(region.final_image.data(), region.final_image.size());
  }
  out.U64(events.size());
  for (const CrashEvent& event : events) {
    out.U64(event.point);
    out.U8(static_cast<uint8_t>(event.kind));
    out.U64(event.placement.placer);
    out.U64(event.placement.first);
    out.U64(event.placement.last);
    out.U8(static_cast<uint8_t>(event.placement.by));
    out.U8((event.placement.visibility_flushed ? 1 : 0) | (event.persistent ? 2 : 0) |
           (static_cast<uint8_t>(event.side) << 2));
    out.Span(event.range);
    out.Bytes(event.overwritten.data(), event.overwritten.size());
    out.U32(static_cast<uint32_t>(event.made_durable.size()));
    for (const CrashSpan& span : event.made_durable) out.Span(span);
    out.U32(static_cast<uint32_t>(event.durable_values.size()));
    for (const CrashValue& value : event.durable_values) {
      out.U32(value.key);
      out.U64(value.begin);
      out.U64(value.bytes.size());
      out.Bytes(value.bytes.data(), value.bytes.size());
    }
  }
  const std::string temporary = path + ".partial";
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    file.write(out.out().data(), static_cast<std::streamsize>(out.out().size()));
    if (!file) {
      *error = "cannot write " + temporary;
      return false;
    }
  }
  if (rename(temporary.c_str(), path.c_str()) != 0) {
    *error = "cannot rename " + temporary + " to " + path;
    return false;
  }
  return true;
}

bool CrashJournal::ReadFrom(const std::string& path, CrashJournal* journal, std::string* error) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    *error = "cannot read " + path;
    return false;
  }
  const std::string in((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  Reader reader(in);
  *journal = CrashJournal();
  if (in.compare(0, sizeof(kMagic), std::string(kMagic, sizeof(kMagic))) != 0) {
    *error = path + " is not a crash journal";
    return false;
  }
  std::vector<uint8_t> magic;
  uint32_t version = 0, regions = 0;
  uint8_t flags = 0;
  uint64_t events = 0;
  bool ok = reader.Bytes(sizeof(kMagic), &magic) && reader.U32(&version);
  if (ok && (version < kOldestVersion || version > kVersion)) {
    *error = path + " is a crash journal of version " + std::to_string(version) +
             "; this reads versions " + std::to_string(kOldestVersion) + " to " +
             std::to_string(kVersion);
    return false;
  }
  ok = ok && reader.U64(&journal->node) && reader.U8(&flags) && reader.U64(&journal->first_point) &&
       reader.String(&journal->end_reason) && reader.U32(&regions) && regions <= reader.left() / 36;
  journal->persistent_memory = flags & 1;
  journal->eadr = flags & 2;
  journal->flush_scope_qp = flags & 4;
  journal->truncated = flags & 8;
  if (ok) journal->regions.resize(regions);
  for (uint32_t i = 0; ok && i < regions; ++i) {
    CrashRegion& region = journal->regions[i];
    ok = reader.U32(&region.key) && reader.U32(&region.ordinal) && reader.U64(&region.address) &&
         reader.U64(&region.length) && reader.String(&region.file) &&
         reader.U64(&region.file_offset) && reader.Bytes(region.length, &region.final_image);
    // A key once: events are checked against the first region with theirs (Region), and
    // the explorer must find that same one.
    ok = ok && journal->Region(region.key) == &region;
    // In the lower half of the address space, where a process maps memory: the explorer's
    // words and lines (at most 64 bytes past the end) then never wrap past 2^64.
    ok = ok && region.address <= kHighestAddress &&
         region.length <= kHighestAddress - region.address;
  }
  ok = ok && reader.U64(&events) && events <= reader.left() / 59;
  if (ok) journal->events.resize(events);
  for (uint64_t i = 0; ok && i < events; ++i) {
    ok = ReadEvent(&reader, version, &journal->events[i]);
    const CrashEvent& event = journal->events[i];
    // A range outside its region would make the explorer write outside an image.
    const CrashRegion* region = ok ? journal->Region(event.range.key) : nullptr;
    ok = ok && (event.kind != CrashEventKind::kPlacement ||
                (region != nullptr && event.range.end <= region->length));
    for (const CrashSpan& span : event.made_durable) {
      const CrashRegion* made = journal->Region(span.key);
      ok = ok && made != nullptr && span.end <= made->length;
    }
    for (const CrashValue& value : event.durable_values) {
      const CrashRegion* made = journal->Region(value.key);
      ok = ok && made != nullptr && value.begin <= made->length &&
           value.bytes.size() <= made->length - value.begin;
    }
  }
  if (!ok || reader.left() != 0) {
    *error = path + " is a damaged crash journal";
    return false;
  }
  return true;
}

}  // namespace rpma_sim
