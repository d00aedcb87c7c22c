#include "nan_contract.h"

#include <algorithm>
#include <exception>
#include <fstream>

#include <fmt/format.h>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace collage::backend_ops {
namespace {

// A backend that sets FTZ/DAZ on the caller's thread and leaves them changes every kernel
// run after it, the reference included; say so and put them back.
bool TakeFlushMode() {
#if defined(__x86_64__) || defined(__i386__)
  constexpr unsigned kFtzDaz = 0x8040;  // MXCSR bit 15 (flush to zero), bit 6 (denormals are zero)
  const unsigned csr = _mm_getcsr();
  if ((csr & kFtzDaz) == 0) return false;
  _mm_setcsr(csr & ~kFtzDaz);
  return true;
#else
  return false;
#endif
}

bool IsContractKind(SpecialKind kind) { return kind != SpecialKind::kSubnormal; }

std::string Trim(const std::string& s) {
  const size_t begin = s.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return "";
  return s.substr(begin, s.find_last_not_of(" \t\r") - begin + 1);
}

}  // namespace

std::vector<SpecialOutcome> CheckSpecialValues(const KernelRunner& runner,
                                               const std::vector<Tensor>& inputs,
                                               double tolerance) {
  std::vector<SpecialOutcome> outcomes;
  for (SpecialKind kind : kSpecialKinds) {
    SpecialOutcome outcome;
    outcome.kind = kind;
    int poisoned = 0;
    std::vector<Tensor> special = WithSpecialValues(runner.request(), inputs, kind, &poisoned);
    outcome.tested = poisoned > 0;
    if (outcome.tested) {
      try {
        StatusOr<std::vector<Tensor>> want = RunReferenceGroup(runner.request(), special);
        StatusOr<std::vector<Tensor>> got = runner.Run(special);
        outcome.left_flush_mode = TakeFlushMode();
        if (!want.ok()) {
          outcome.reference_error = want.status().message();
        } else if (!got.ok()) {
          outcome.error = "run: " + got.status().message();
        } else {
          outcome.check = ComparePattern(*got, *want, tolerance);
        }
      } catch (const std::exception& e) {
        outcome.left_flush_mode = TakeFlushMode();
        outcome.error = fmt::format("exception escaped: {}", e.what());
      }
    }
    outcomes.push_back(std::move(outcome));
  }
  return outcomes;
}

bool NanExemptions::AddFile(const std::string& path, std::string* error) {
  std::ifstream in(path);
  if (!in) {
    *error = fmt::format("cannot read the exemption file '{}'", path);
    return false;
  }
  std::string line;
  while (std::getline(in, line)) {
    line = Trim(line.substr(0, line.find('#')));
    if (!line.empty()) Add(line);
  }
  return true;
}

bool NanExemptions::Covers(const std::string& backend, const std::string& rule) const {
  return entries_.count(backend + ":" + rule) > 0 || entries_.count(backend + ":*") > 0;
}

bool NanContractTable::Row::Deviates() const {
  for (const auto& [kind, per_kind] : kinds) {
    if (IsContractKind(kind) && per_kind.deviating > 0) return true;
  }
  return false;
}

NanContractTable::Row& NanContractTable::RowFor(const std::string& backend, const std::string& rule,
                                                bool declared) {
  for (Row& row : rows_) {
    if (row.backend == backend && row.rule == rule) return row;
  }
  rows_.push_back(Row{});
  rows_.back().backend = backend;
  rows_.back().rule = rule;
  rows_.back().declared = declared;
  return rows_.back();
}

void NanContractTable::Add(const std::string& backend, const std::string& rule, bool declared,
                           const std::string& group, const std::vector<SpecialOutcome>& outcomes) {
  Row& row = RowFor(backend, rule, declared);
  const bool tested = std::any_of(outcomes.begin(), outcomes.end(),
                                  [](const SpecialOutcome& o) { return o.tested; });
  ++(tested ? row.groups : row.untested);
  for (const SpecialOutcome& o : outcomes) {
    if (!o.tested) continue;
    PerKind& per_kind = row.kinds[o.kind];
    row.left_flush_mode |= o.left_flush_mode;
    if (!o.reference_error.empty()) {
      row.reference_errors.push_back(
          fmt::format("{}: {}: {}", SpecialKindName(o.kind), group, o.reference_error));
      continue;
    }
    if (o.kind == SpecialKind::kSubnormal) {
      row.subnormal_reference += o.check.subnormal_reference;
      row.subnormal_flushed += o.check.subnormal_flushed;
    }
    std::vector<std::string> classes = o.check.classes;
    std::string how = o.check.deviation;
    if (!o.error.empty()) {
      classes = {o.error.rfind("run:", 0) == 0 ? "run fails" : "throws"};
      how = o.error;
    }
    if (classes.empty()) continue;
    ++per_kind.deviating;
    for (const std::string& c : classes) {
      if (std::find(per_kind.classes.begin(), per_kind.classes.end(), c) ==
          per_kind.classes.end()) {
        per_kind.classes.push_back(c);
      }
    }
    if (per_kind.example.empty()) per_kind.example = fmt::format("{}: {}", group, how);
  }
}

std::string NanContractTable::Render(const NanExemptions& exempt) const {
  std::string out =
      "| backend | rule | declared | groups | verdict | nan | nan-row | inf | inf-row | "
      "subnormals |\n"
      "|---|---|---|---|---|---|---|---|---|---|\n";
  std::string examples;
  int deviating = 0, meeting = 0, declared_deviating = 0;
  for (const Row& row : rows_) {
    std::string verdict;
    const bool exempted = exempt.Covers(row.backend, row.rule);
    if (row.groups == 0) {
      verdict = "untested (no float input)";
    } else if (row.Deviates()) {
      // Only a declared rule must meet the contract; the others may place for speed.
      verdict = !row.declared ? "deviates"
                : exempted    ? "exempt, deviates"
                              : "**DEVIATES (declared)**";
      ++deviating;
      declared_deviating += row.declared && !exempted;
    } else {
      verdict = exempted       ? "exempt, meets (drop it)"
                : row.declared ? "meets"
                               : "meets (not declared)";
      ++meeting;
    }
    std::vector<std::string> cells;
    for (SpecialKind kind : kSpecialKinds) {
      auto it = row.kinds.find(kind);
      if (it == row.kinds.end()) {
        cells.push_back("-");
        continue;
      }
      const PerKind& k = it->second;
      std::string cell = k.deviating == 0 ? "ok"
                                          : fmt::format("{} ({}/{})", fmt::join(k.classes, ", "),
                                                        k.deviating, row.groups);
      if (kind == SpecialKind::kSubnormal) {
        std::string flush =
            row.subnormal_flushed > 0
                ? fmt::format("flushed to 0: {}/{}", row.subnormal_flushed, row.subnormal_reference)
            : row.subnormal_reference > 0 ? "kept"
                                          : "none in output";
        cell = k.deviating == 0 ? flush : flush + "; " + cell;
        if (row.left_flush_mode) cell += "; leaves FTZ/DAZ set";
      }
      cells.push_back(cell);
      if (k.deviating > 0) {
        examples += fmt::format("- {} {}, {}: {}\n", row.backend, row.rule, SpecialKindName(kind),
                                k.example);
      }
    }
    out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", row.backend, row.rule,
                       row.declared ? "yes" : "no", row.groups, verdict, fmt::join(cells, " | "));
    for (const std::string& e : row.reference_errors) {
      examples += fmt::format("- {} {}: the reference failed ({})\n", row.backend, row.rule, e);
    }
  }
  out += fmt::format(
      "\n{} rules meet the contract, {} deviate ({} of them declared to meet it and not "
      "exempt). 'declared': the rule declares PropagatesNonFinite (strict NaN/Inf mode uses "
      "only those; enforce fails on one that deviates). A cell names each kind of mismatch seen "
      "(the reference's value -> the backend's) and how many of the rule's groups showed one. "
      "Subnormals never fail the contract: 'flushed to 0' counts the subnormal reference "
      "outputs that came back as 0.\n",
      meeting, deviating, declared_deviating);
  if (!examples.empty()) out += "\nOne example per deviating rule and input kind:\n\n" + examples;
  return out;
}

std::vector<std::string> NanContractTable::UnmatchedExemptions(const NanExemptions& exempt) const {
  std::vector<std::string> unmatched;
  for (const std::string& entry : exempt.entries()) {
    const bool used = std::any_of(rows_.begin(), rows_.end(), [&](const Row& row) {
      return entry == row.backend + ":" + row.rule || entry == row.backend + ":*";
    });
    if (!used) unmatched.push_back(entry);
  }
  return unmatched;
}

std::vector<std::string> NanContractTable::Violations(const NanExemptions& exempt) const {
  std::vector<std::string> violations;
  for (const Row& row : rows_) {
    if (row.declared && row.Deviates() && !exempt.Covers(row.backend, row.rule)) {
      violations.push_back(row.backend + " " + row.rule);
    }
  }
  return violations;
}

}  // namespace collage::backend_ops
