// What `collage optimize` and `collage demo` show after a search: its summary, the share of
// each backend, and the optimized placement against every backend alone — each checked
// against the reference kernels, then timed side by side.
#pragma once

#include <string>
#include <vector>

#include "collage/optimize.h"
#include "collage/session.h"
#include "collage/status.h"

namespace collage::cli {

// Session::Optimize with a progress bar on stderr (measurements, then generations), the
// session's warnings printed after it.
Status OptimizeWithProgress(Session& session, OptimizeOptions options, OptimizeReport* report);

// Candidates, cache hits, invalid ones, the search's size and time, then per backend its
// nodes, groups and share of the measured time.
void PrintOptimizeReport(const OptimizeReport& report);

struct ComparisonRow {
  std::string label;  // "optimized", "<backend> alone"
  double median_ms = 0;
  double error = 0;   // normalized error against the reference kernels
  std::string skipped = {};  // why this contender was left out (it failed to load, run or match)
};

// Loads `model` once per backend in `backends` (placed on it alone; "native" is added, it is
// the reference), runs all of them and `optimized` on the same random inputs and checks each
// output against the reference within `tolerance`, then times them side by side for `rounds`
// rounds. The optimized row comes first. A single backend that cannot load, run or match the
// reference is a skipped row with the reason (the comparison goes on without it); only the
// optimized placement failing, or the reference itself, is an error.
StatusOr<std::vector<ComparisonRow>> CompareWithEachBackend(const std::string& model,
                                                            const SessionOptions& base,
                                                            Session& optimized,
                                                            std::vector<std::string> backends,
                                                            int rounds, double tolerance);

// The rows with each one's speedup of the optimized placement, the skipped ones with their
// reason, and the best single backend.
void PrintComparison(const std::vector<ComparisonRow>& rows);

}  // namespace collage::cli
