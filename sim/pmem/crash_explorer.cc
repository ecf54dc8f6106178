// crash_explorer.cc -- rebuilding each crash state's image from a journal.
//
// Backwards from the regions' final contents through what each placement overwrote, the
// explorer finds each placement's bytes and the memory before the first point. Forwards
// from there it keeps, at each point, the current image C, the durable image D (the bytes
// as they were when last durable) and the bytes not durable U, for which C and D differ at
// most; a state's image is D with the units of U that survive taken from C.
//
// Memory registered twice is one memory: whatever changes bytes of one region's image
// changes the same bytes of every region that shares them (Mirror), and a placement takes its
// bytes from the other regions' sets of bytes not durable (as the persistence domain hands
// them over), so every image agrees on the memory the regions share.
#include "sim/pmem/crash_explorer.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <algorithm>
#include <set>
#include <unordered_map>
#include <utility>

#include "sim/common/seeded_draw.h"
#include "sim/pmem/byte_ranges.h"

namespace rpma_sim {
namespace {

using Images = std::vector<std::vector<uint8_t>>;

// A word or line holding bytes not durable: its region and its first byte's address (as
// the recording process had it; it may lie before the region's start).
struct Unit {
  size_t region;
  uint64_t address;
};

// Another region that shares memory with a region: its index, and the distance from the one
// region's start to the other's (the other's offset = this one's offset - `shift`).
struct Alias {
  size_t region;
  int64_t shift;
};

class Explorer {
 public:
  Explorer(const CrashJournal& journal, const CrashExploreOptions& options,
           const std::function<bool(const CrashState&)>& check, CrashExploreSummary* summary)
      : journal_(journal), options_(options), check_(check), summary_(summary) {}

  bool Run(std::string* error) {
    for (size_t i = 0; i < journal_.regions.size(); ++i) {
      const CrashRegion& region = journal_.regions[i];
      if (region.final_image.size() != region.length) {
        *error = "region 0x" + Hex(region.key) + " has no final contents in the journal";
        return false;
      }
      index_[region.key] = i;
    }
    FindAliases();
    summary_->points = journal_.events.size();
    RebuildTheStart();
    durable_ = current_;
    not_durable_.assign(journal_.regions.size(), ByteRanges());
    for (size_t k = 0; k <= journal_.events.size(); ++k) {
      const CrashEvent* event = k < journal_.events.size() ? &journal_.events[k] : nullptr;
      const uint64_t point = event != nullptr ? event->point : NextPoint();
      if (!StatesAt(point, event)) {
        summary_->stopped = true;
        return true;
      }
      if (event != nullptr) Apply(k);
    }
    return true;
  }

 private:
  // The rule that cuts the power just before `point`, made by `event`, with `loss` (its
  // loss and keep): on the side of the connection that made it, when known, so that in a
  // process that runs both, the peer's node reaching its own point K does not fire it. None
  // after the last point (no event): no point comes to stop before.
  static std::string RuleAt(uint64_t point, const CrashEvent* event, const std::string& loss) {
    if (event == nullptr) return "";
    std::string rule = "power_failure:point=" + std::to_string(point);
    if (event->side == CrashSide::kServer) rule += ",side=server";
    if (event->side == CrashSide::kClient) rule += ",side=client";
    if (event->kind == CrashEventKind::kPersist) rule += ",at=persist";
    return rule + "," + loss;
  }

  static std::string Hex(uint64_t value) {
    char text[24];
    snprintf(text, sizeof(text), "%" PRIx64, value);
    return text;
  }

  uint64_t NextPoint() const {
    return journal_.events.empty() ? journal_.first_point : journal_.events.back().point + 1;
  }

  void FindAliases() {
    aliases_.assign(journal_.regions.size(), {});
    for (size_t i = 0; i < journal_.regions.size(); ++i) {
      for (size_t j = 0; j < journal_.regions.size(); ++j) {
        const CrashRegion& a = journal_.regions[i];
        const CrashRegion& b = journal_.regions[j];
        if (i != j && a.address < b.address + b.length && b.address < a.address + a.length)
          aliases_[i].push_back(Alias{j, static_cast<int64_t>(b.address - a.address)});
      }
    }
  }

  // Calls `visit(j, from, to, shift)` for each other region j that holds some of region i's
  // bytes [begin, end): [from, to) in j's offsets, j's offset + shift = i's.
  template <typename Visit>
  void ForEachAlias(size_t i, uint64_t begin, uint64_t end, Visit&& visit) const {
    for (const Alias& alias : aliases_[i]) {
      const int64_t length = static_cast<int64_t>(journal_.regions[alias.region].length);
      const int64_t from = std::max<int64_t>(static_cast<int64_t>(begin) - alias.shift, 0);
      const int64_t to = std::min<int64_t>(static_cast<int64_t>(end) - alias.shift, length);
      if (from < to)
        visit(alias.region, static_cast<uint64_t>(from), static_cast<uint64_t>(to), alias.shift);
    }
  }

  // Region i's bytes [begin, end) of `images` changed: the regions that share them get them.
  void Mirror(Images* images, size_t i, uint64_t begin, uint64_t end) const {
    ForEachAlias(i, begin, end, [&](size_t j, uint64_t from, uint64_t to, int64_t shift) {
      memcpy((*images)[j].data() + from, (*images)[i].data() + (from + shift), to - from);
    });
  }

  // current_ = the memory before the first point; placed_[k] = the bytes placement k put.
  void RebuildTheStart() {
    current_.resize(journal_.regions.size());
    for (size_t i = 0; i < journal_.regions.size(); ++i)
      current_[i] = journal_.regions[i].final_image;
    placed_.resize(journal_.events.size());
    for (size_t k = journal_.events.size(); k-- > 0;) {
      const CrashEvent& event = journal_.events[k];
      if (event.kind != CrashEventKind::kPlacement) continue;
      const size_t region = index_.at(event.range.key);
      std::vector<uint8_t>& image = current_[region];
      placed_[k].assign(image.begin() + event.range.begin, image.begin() + event.range.end);
      memcpy(image.data() + event.range.begin, event.overwritten.data(), event.overwritten.size());
      Mirror(&current_, region, event.range.begin, event.range.begin + event.overwritten.size());
    }
  }

  void Apply(size_t k) {
    const CrashEvent& event = journal_.events[k];
    if (event.kind == CrashEventKind::kPlacement) {
      const size_t region = index_.at(event.range.key);
      memcpy(current_[region].data() + event.range.begin, placed_[k].data(), placed_[k].size());
      Mirror(&current_, region, event.range.begin, event.range.end);
      // The bytes are this region's placement now, no other's.
      ForEachAlias(
          region, event.range.begin, event.range.end,
          [&](size_t j, uint64_t from, uint64_t to, int64_t) { not_durable_[j].Remove(from, to); });
      not_durable_[region].Add(event.range.begin, event.range.end);
      return;
    }
    // As the flush did: the older values drained first, then what it made durable.
    for (const CrashValue& value : event.durable_values) {
      const size_t region = index_.at(value.key);
      memcpy(durable_[region].data() + value.begin, value.bytes.data(), value.bytes.size());
      Mirror(&durable_, region, value.begin, value.begin + value.bytes.size());
    }
    for (const CrashSpan& span : event.made_durable) {
      const size_t region = index_.at(span.key);
      memcpy(durable_[region].data() + span.begin, current_[region].data() + span.begin,
             span.end - span.begin);
      Mirror(&durable_, region, span.begin, span.end);
      not_durable_[region].Remove(span.begin, span.end);
      ForEachAlias(
          region, span.begin, span.end,
          [&](size_t j, uint64_t from, uint64_t to, int64_t) { not_durable_[j].Remove(from, to); });
    }
  }

  // Every state at `point`; false to stop.
  bool StatesAt(uint64_t point, const CrashEvent* event) {
    CrashState state;
    state.point = point;
    state.event = event;
    uint64_t bytes = 0;
    size_t ranges = 0;
    for (const ByteRanges& set : not_durable_) {
      ranges += set.ranges().size();
      for (const auto& range : set.ranges()) bytes += range.second - range.first;
    }
    state.loss = LossMode::kAll;
    state.rule = RuleAt(point, event, "loss=all");
    state.reverted = bytes == 0
                         ? "nothing (every byte was durable)"
                         : "all " + std::to_string(bytes) + " bytes not durable (" +
                               std::to_string(ranges) + " range" + (ranges == 1 ? ")" : "s)");
    if (!Give(state, durable_)) return false;
    // Where nothing can survive a power failure, nothing survives it torn either.
    if (bytes == 0 || !journal_.persistent_memory) return true;
    if (options_.words && !TornStates(point, event, 8, LossMode::kWords)) return false;
    if (options_.lines && !TornStates(point, event, 64, LossMode::kLines)) return false;
    return true;
  }

  std::vector<Unit> UnitsNotDurable(uint64_t unit) const {
    std::vector<Unit> units;
    for (size_t i = 0; i < not_durable_.size(); ++i) {
      const uint64_t base = journal_.regions[i].address;
      for (const auto& range : not_durable_[i].ranges()) {
        for (uint64_t at = (base + range.first) & ~(unit - 1); at < base + range.second;
             at += unit) {
          if (!units.empty() && units.back().region == i && units.back().address == at) continue;
          units.push_back(Unit{i, at});
        }
      }
    }
    return units;
  }

  // Copies into `image` the bytes not durable of `unit` (`size` bytes) from current_.
  void Survives(const Unit& unit, uint64_t size, Images* image) const {
    const uint64_t base = journal_.regions[unit.region].address;
    const uint64_t from = std::max(unit.address, base) - base;
    const uint64_t to = std::min(unit.address + size - base, journal_.regions[unit.region].length);
    for (const auto& range : not_durable_[unit.region].ranges()) {
      const uint64_t begin = std::max(from, range.first), end = std::min(to, range.second);
      if (begin < end) {
        memcpy((*image)[unit.region].data() + begin, current_[unit.region].data() + begin,
               end - begin);
        Mirror(image, unit.region, begin, end);
      }
    }
  }

  bool TornStates(uint64_t point, const CrashEvent* event, uint64_t size, LossMode loss) {
    const std::vector<Unit> units = UnitsNotDurable(size);
    const char* name = size == 8 ? "word" : "line";
    const std::string mode = size == 8 ? "words" : "lines";
    CrashState state;
    state.point = point;
    state.event = event;
    state.loss = loss;
    for (const Unit& unit : units) {
      Images image = durable_;
      Survives(unit, size, &image);
      const CrashRegion& region = journal_.regions[unit.region];
      const uint64_t offset = std::max(unit.address, region.address) - region.address;
      state.reverted = "all but the " + std::string(name) + " at offset " + std::to_string(offset) +
                       " of region 0x" + Hex(region.key) + " (of " + std::to_string(units.size()) +
                       ")";
      state.rule = RuleAt(point, event,
                          "loss=" + mode + ",keep=" + std::to_string(region.ordinal) + ":" +
                              std::to_string(offset));
      state.seed = 0;
      if (!Give(state, image)) return false;
    }
    for (uint32_t sample = 0; sample < options_.samples; ++sample) {
      const uint64_t seed = options_.seed + sample;
      Images image = durable_;
      size_t kept = 0;
      for (const Unit& unit : units) {
        const CrashRegion& region = journal_.regions[unit.region];
        const uint64_t aligned_base = region.address & ~(size - 1);
        // As PersistenceDomain::PowerFail draws for the process's first power failure.
        if ((Draw(seed, 1, region.ordinal, (unit.address - aligned_base) / size) & 1) != 0)
          continue;
        Survives(unit, size, &image);
        ++kept;
      }
      state.reverted = std::to_string(units.size() - kept) + " of " + std::to_string(units.size()) +
                       " " + name + "s (seed " + std::to_string(seed) + ")";
      state.rule = RuleAt(point, event, "loss=" + mode);
      state.seed = seed;
      if (!Give(state, image)) return false;
    }
    return true;
  }

  // Hands `image` to the check unless an equal one went before (by a 128-bit digest: two
  // independent 64-bit hashes, FNV-1a and a multiply-rotate one, so that no pair of images
  // that one of them confuses, as FNV-1a's can be found to, is taken as equal); false to
  // stop.
  bool Give(CrashState& state, const Images& image) {
    uint64_t fnv = 0xcbf29ce484222325ull;
    uint64_t mix = 0x9e3779b97f4a7c15ull;
    for (const std::vector<uint8_t>& region : image) {
      for (uint8_t byte : region) {
        fnv = (fnv ^ byte) * 0x100000001b3ull;
        mix = ((mix + byte + 1) * 0xbf58476d1ce4e5b9ull);
        mix ^= mix >> 29;
      }
    }
    if (!seen_.insert({fnv, mix}).second) {
      ++summary_->duplicates;
      return true;
    }
    state.images = &image;
    ++summary_->states;
    if (!check_(state)) return false;
    return options_.max_states == 0 || summary_->states < options_.max_states;
  }

  const CrashJournal& journal_;
  const CrashExploreOptions& options_;
  const std::function<bool(const CrashState&)>& check_;
  CrashExploreSummary* const summary_;
  std::unordered_map<uint32_t, size_t> index_;  // region key -> index
  std::vector<std::vector<Alias>> aliases_;     // by region: the others sharing its memory
  Images current_;
  Images durable_;
  std::vector<ByteRanges> not_durable_;
  std::vector<std::vector<uint8_t>> placed_;      // by event
  std::set<std::pair<uint64_t, uint64_t>> seen_;  // the images' digests
};

}  // namespace

bool ExploreCrashStates(const CrashJournal& journal, const CrashExploreOptions& options,
                        const std::function<bool(const CrashState&)>& check,
                        CrashExploreSummary* summary, std::string* error) {
  *summary = CrashExploreSummary();
  return Explorer(journal, options, check, summary).Run(error);
}

}  // namespace rpma_sim
