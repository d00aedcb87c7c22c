#include "cost/cost_row.h"

#include <fmt/format.h>

namespace collage {

CostLookup JudgeRow(const RawCostRow& row, ClaimHolder holder, double time_limit_s) {
  CostLookup lookup;
  CostRecord record;
  if (row.state == "measuring") {
    // pid <= 0 was never a process's: a damaged row, measured again.
    if (row.pid <= 0 || holder == ClaimHolder::kThisProcess) return lookup;
    if (holder == ClaimHolder::kAlive) {
      lookup.claimed_elsewhere = true;
      return lookup;
    }
    // A lapsed lease says the owner stopped, not why: a machine switched off is as likely as
    // a crash, so the candidate is measured again (on this machine its process is watched).
    if (holder == ClaimHolder::kLapsed || !row.in_process) return lookup;
    // Measured in its own process, the candidate may have crashed it: not risked again.
    record.valid = false;
    record.reason = fmt::format(
        "the process measuring it in-process (pid {}) died before it finished; "
        "not tried again",
        row.pid);
    lookup.record = record;
    return lookup;
  }
  if (row.state != "valid" && row.state != "invalid") return lookup;
  record.valid = row.state == "valid";
  record.median_ms = row.median_ms;
  record.p90_ms = row.p90_ms;
  record.reason = row.reason;
  record.timed_out_after_s = row.time_limit_s;
  record.killed_from_outside = row.outside_kills > 0;
  if (!record.valid) {
    // A time-out says the candidate is slower than that limit, nothing about a longer one.
    if (record.timed_out_after_s > 0 && time_limit_s > record.timed_out_after_s) return lookup;
    // One kill from outside is bad luck; a second one is taken as the candidate's doing.
    if (row.outside_kills == 1) return lookup;
  }
  // A valid record's cost must be a number of milliseconds a kernel can take: text (read as
  // 0 ms, a free kernel), NaN, infinity or an implausible value is damage, and the candidate
  // is measured again as if the row were absent.
  if (record.valid && (!row.costs_are_numbers || !PlausibleMilliseconds(row.median_ms) ||
                       !PlausibleMilliseconds(row.p90_ms))) {
    return lookup;
  }
  record.samples = row.samples;
  // A row that cannot be read back is measured again rather than trusted.
  if (!LayoutsFromJson(row.layouts, record)) return lookup;
  lookup.record = std::move(record);
  return lookup;
}

}  // namespace collage
