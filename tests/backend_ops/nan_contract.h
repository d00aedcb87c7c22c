// The NaN/Inf contract of the differential harness: a backend's kernels must give, per
// output element, NaN where the reference kernels (which follow the ONNX spec: NaN
// propagates through Relu, Clip, Max/Min, MaxPool, Softmax, reductions, ...) give NaN, the
// same infinity where they give one, and finite values within the usual tolerance elsewhere.
// With --nan-contract=report|enforce every tested group is also run on the inputs of
// special_inputs.h, and a verdict is kept per (backend, rule); `report` prints the table,
// `enforce` also fails the run on a deviating rule that declares it meets the contract
// (Rule::PropagatesNonFinite: what strict NaN/Inf mode relies on) and is not exempt; an
// undeclared rule's deviations are reported only. Subnormal inputs are reported (flushed to
// zero or kept) but never fail: flushing stays within tolerance.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "runtime/kernel_runner.h"
#include "special_compare.h"
#include "special_inputs.h"

namespace collage::backend_ops {

// What one kind of special input gave on one group.
struct SpecialOutcome {
  SpecialKind kind = SpecialKind::kNan;
  bool tested = false;          // false: the group has no float input to write into
  std::string error;            // the backend failed or threw on these inputs
  std::string reference_error;  // the oracle failed: a harness problem, not a deviation
  PatternCheck check;
  bool left_flush_mode = false;  // the backend left FTZ/DAZ set on the calling thread
};

// Runs `runner` and the reference on every SpecialKind derived from `inputs` (the group's
// random finite inputs) and compares them. Never throws.
std::vector<SpecialOutcome> CheckSpecialValues(const KernelRunner& runner,
                                               const std::vector<Tensor>& inputs, double tolerance);

// "backend:rule" or "backend:*", from --nan-exempt and --nan-exempt-file.
class NanExemptions {
 public:
  void Add(const std::string& entry) { entries_.insert(entry); }
  // Lines "backend:rule", '#' starts a comment. False (with *error) when unreadable.
  bool AddFile(const std::string& path, std::string* error);
  bool Covers(const std::string& backend, const std::string& rule) const;
  const std::set<std::string>& entries() const { return entries_; }

 private:
  std::set<std::string> entries_;
};

class NanContractTable {
 public:
  // `group` describes the group in messages: "Conv+Relu float32[1x8x5x5] (random.fused.2)".
  // `declared`: the rule declares that it meets the contract (must meet it).
  void Add(const std::string& backend, const std::string& rule, bool declared,
           const std::string& group, const std::vector<SpecialOutcome>& outcomes);
  // The verdict table, in Markdown: one row per (backend, rule) seen, then the examples.
  std::string Render(const NanExemptions& exempt) const;
  // "backend rule" of each deviating declared rule that `exempt` does not cover.
  std::vector<std::string> Violations(const NanExemptions& exempt) const;
  // Exemptions that match no (backend, rule) of the table: a typo, or a rule since renamed.
  std::vector<std::string> UnmatchedExemptions(const NanExemptions& exempt) const;

 private:
  struct PerKind {
    int deviating = 0;
    std::vector<std::string> classes;  // distinct, in the order first seen
    std::string example;               // the first deviating group and how
  };
  struct Row {
    std::string backend, rule;
    bool declared = false;
    int groups = 0;    // groups with a float input, run on the special inputs
    int untested = 0;  // groups without one
    std::map<SpecialKind, PerKind> kinds;
    int64_t subnormal_reference = 0, subnormal_flushed = 0;
    bool left_flush_mode = false;
    std::vector<std::string> reference_errors;
    bool Deviates() const;
  };
  std::vector<Row> rows_;  // in the order first seen
  Row& RowFor(const std::string& backend, const std::string& rule, bool declared);
};

}  // namespace collage::backend_ops
