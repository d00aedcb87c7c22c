// How a stored row of the cost database is judged (cost/cost_database.h, Lookup): the one
// rule both stores apply to what they read, so that SQLite and PostgreSQL trust exactly the
// same rows. A row is read raw, the store says whether the owner of a claim is still there
// (each store knows its own owners), and JudgeRow decides: the record to use, a claim to wait
// for, or nothing (measure again).
#pragma once

#include <cstdint>
#include <string>

#include "cost/cost_database.h"

namespace collage {

// A row of the `costs` table as read, unjudged.
struct RawCostRow {
  std::string state;  // "valid", "invalid" or "measuring"
  double median_ms = 0;
  double p90_ms = 0;
  // False where a cost column held something that is not a number (SQLite stores text in a
  // REAL column): read as 0 ms it would price a kernel as free.
  bool costs_are_numbers = true;
  int samples = 0;
  std::string layouts;
  std::string reason;
  int64_t pid = 0;
  bool in_process = false;
  double time_limit_s = 0;
  int64_t outside_kills = 0;
};

// Who holds a `measuring` row, as its store sees it.
enum class ClaimHolder {
  kThisProcess,  // this process's own claim (it is measuring it)
  kAlive,        // another live owner: its measurement is coming
  kDied,         // a process of this machine that is gone (a crash, a kill)
  kLapsed,       // an owner on another machine that stopped renewing its lease
};

// The lookup the row gives under a run allowing `time_limit_s` per measurement (0: any).
// `holder` is read only for a `measuring` row with a plausible pid.
CostLookup JudgeRow(const RawCostRow& row, ClaimHolder holder, double time_limit_s);

}  // namespace collage
