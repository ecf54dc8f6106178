// soak_stats.cc -- the soak's counters and summary table.
#include "tests/soak/soak_stats.h"

namespace soak {

const char* KindName(Kind kind) {
  switch (kind) {
    case kWrite:
      return "write";
    case kRead:
      return "read";
    case kAtomicWrite:
      return "atomic_write";
    case kFlushPersistent:
      return "flush persistent";
    case kFlushVisibility:
      return "flush visibility";
    case kSend:
      return "send";
    case kSendWithImm:
      return "send_with_imm";
    case kWriteWithImm:
      return "write_with_imm";
    case kRecv:
      return "recv";
    case kKindCount:
      break;
  }
  return "?";
}

void Accumulate(Stats* a, const Stats& b) {
  for (int k = 0; k < kKindCount; ++k) {
    a->kinds[k].posted += b.kinds[k].posted;
    a->kinds[k].ok += b.kinds[k].ok;
    a->kinds[k].failed += b.kinds[k].failed;
    a->kinds[k].flushed += b.kinds[k].flushed;
    a->kinds[k].queue_full += b.kinds[k].queue_full;
  }
  a->rules_added += b.rules_added;
  a->rules_fired += b.rules_fired;
  a->failures_predicted += b.failures_predicted;
  for (int m = 0; m < 4; ++m) a->power_failures[m] += b.power_failures[m];
  a->units_reverted += b.units_reverted;
  a->reconnects += b.reconnects;
  a->checkpoints += b.checkpoints;
  a->persists += b.persists;
  a->bytes_verified += b.bytes_verified;
  a->uncertain_windows += b.uncertain_windows;
}

void PrintSummary(const char* title, const Stats& s, FILE* out) {
  fprintf(out, "%s\n", title);
  fprintf(out, "  %-18s %10s %10s %8s %8s %10s\n", "operation", "posted", "ok", "failed", "flushed",
          "queue full");
  KindCounts total;
  for (int k = 0; k < kKindCount; ++k) {
    const KindCounts& c = s.kinds[k];
    fprintf(out, "  %-18s %10llu %10llu %8llu %8llu %10llu\n", KindName(static_cast<Kind>(k)),
            (unsigned long long)c.posted, (unsigned long long)c.ok, (unsigned long long)c.failed,
            (unsigned long long)c.flushed, (unsigned long long)c.queue_full);
    if (k == kRecv) continue;  // receives are not operations of the count
    total.posted += c.posted;
    total.ok += c.ok;
    total.failed += c.failed;
    total.flushed += c.flushed;
    total.queue_full += c.queue_full;
  }
  fprintf(out, "  %-18s %10llu %10llu %8llu %8llu %10llu\n", "all but recv",
          (unsigned long long)total.posted, (unsigned long long)total.ok,
          (unsigned long long)total.failed, (unsigned long long)total.flushed,
          (unsigned long long)total.queue_full);
  fprintf(out,
          "  fault rules: %llu added, %llu firings, %llu failures at the predicted operation\n",
          (unsigned long long)s.rules_added, (unsigned long long)s.rules_fired,
          (unsigned long long)s.failures_predicted);
  fprintf(out,
          "  power failures: %llu all, %llu words, %llu lines, %llu none (%llu units reverted)\n",
          (unsigned long long)s.power_failures[0], (unsigned long long)s.power_failures[1],
          (unsigned long long)s.power_failures[2], (unsigned long long)s.power_failures[3],
          (unsigned long long)s.units_reverted);
  fprintf(out, "  reconnects: %llu; checkpoints: %llu; persists: %llu; uncertain windows: %llu\n",
          (unsigned long long)s.reconnects, (unsigned long long)s.checkpoints,
          (unsigned long long)s.persists, (unsigned long long)s.uncertain_windows);
  fprintf(out, "  bytes verified: %llu\n", (unsigned long long)s.bytes_verified);
}

}  // namespace soak
