#include "cost/cost_model.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <thread>

#include "collage/device_fingerprint.h"
#include "collage/cancellation.h"
#include "collage/sdk/errors.h"
#include "cost/group_signature.h"
#include "cost/library_switch_measure.h"
#include "runtime/kernel_runner.h"
#include "runtime/layout_conversion.h"

namespace collage {
namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string KeyText(const CostKey& key) {
  return key.backend + '\n' + key.backend_version + '\n' + key.signature;
}

// The probe kernels of one backend: two typical groups of this model (the cheapest that take
// at least kProbeMs, so that they are big enough to use every thread, else the two most
// expensive); the same one twice when the backend offers one only.
std::vector<const SearchCandidate*> ProbeKernelsOf(const std::vector<const SearchCandidate*>& offered,
                                                   double probe_ms) {
  std::vector<const SearchCandidate*> sorted = offered;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const SearchCandidate* x, const SearchCandidate* y) { return x->cost_ms < y->cost_ms; });
  size_t first = 0;
  while (first < sorted.size() && sorted[first]->cost_ms < probe_ms) ++first;
  if (first + 2 > sorted.size()) first = sorted.size() >= 2 ? sorted.size() - 2 : 0;
  if (sorted.size() == 1) return {sorted[0], sorted[0]};
  return {sorted[first], sorted[first + 1]};
}

}  // namespace

MeasuredCostModel::MeasuredCostModel(const Graph& graph, const BackendRegistry& registry,
                                     CostDatabase& database, Measurer& measurer, int threads,
                                     MeasureSettings settings,
                                     std::function<void(const OptimizeProgress&)> on_progress,
                                     CancellationToken cancel)
    : graph_(graph),
      registry_(registry),
      database_(database),
      measurer_(measurer),
      threads_(threads),
      context_(std::make_shared<ExecutionContext>(threads)),
      settings_(settings),
      on_progress_(std::move(on_progress)),
      cancel_(std::move(cancel)),
      started_(Now()) {}

CostKey MeasuredCostModel::KeyFor(const SearchCandidate& candidate) const {
  CostKey key;
  key.device = DeviceFingerprint();
  key.backend = candidate.backend;
  const Backend* backend = registry_.Find(candidate.backend);
  key.backend_version = backend != nullptr ? backend->version() : "";
  key.signature = candidate.rule + "|" + GroupSignature(graph_, candidate.nodes);
  // A float32 key is as it was before precisions existed, so that those costs still count.
  if (candidate.precision != Precision::kFloat32) {
    key.signature += std::string("|") + PrecisionName(candidate.precision);
  }
  key.threads = threads_;
  MeasureSettings settings = SettingsFor(candidate.nodes);
  if (backend != nullptr) settings = SettingsForBackend(settings, *backend);
  key.method = MeasureMethodKey(settings);
  return key;
}

MeasureSettings MeasuredCostModel::SettingsFor(const SubGraph& nodes) const {
  // A group that is the whole model is timed warm, as it runs served: scrubbed before every
  // timed run, an engine's whole model measured nearly twice its served time, and the op-level
  // search never took it over a mix that ran slower (docs/measurements.md, "Figures behind the
  // code's choices", says what was measured and what was not measured again).
  return nodes.size() == graph_.num_nodes() ? WarmSettings() : settings_;
}

void MeasuredCostModel::Report(const std::string& phase, int done, int total) {
  if (!on_progress_) return;
  OptimizeProgress progress;
  progress.phase = phase;
  progress.done = done;
  progress.total = total;
  progress.cache_hits = cache_hits_;
  progress.invalid = invalid_;
  progress.elapsed_seconds = Now() - started_;
  on_progress_(progress);
}

Status MeasuredCostModel::Interrupted() const {
  return Status(StatusCode::kCancelled,
                fmt::format("interrupted while measuring: the {} measurements made so far are "
                            "kept in the cost database {}",
                            measured_, database_.path()));
}

Status MeasuredCostModel::WaitForOthers() {
  if (cancel_.cancelled()) return Interrupted();
  // A claim's lease is renewed while this process waits as while it measures.
  COLLAGE_RETURN_IF_ERROR(database_.RenewClaims());
  std::this_thread::sleep_for(std::chrono::duration<double>(kOthersPollSeconds));
  return Status();
}

StatusOr<CostRecord> MeasuredCostModel::Resolve(
    const CostKey& key, const std::function<StatusOr<CostRecord>()>& measure) {
  for (;;) {
    COLLAGE_ASSIGN_OR_RETURN(CostLookup found, database_.Lookup(key, measurer_.time_limit_seconds()));
    if (found.record.has_value()) {
      ++cache_hits_;
      return *found.record;
    }
    // Stopping here loses nothing: every finished measurement is already stored.
    if (cancel_.cancelled()) return Interrupted();
    // Claimed first, so that other processes wait for this measurement instead of repeating
    // it. Measured in this process, a candidate that crashes it is found by the next run and
    // recorded invalid instead of crashing again; measured in a worker, the claim lapses with
    // this process.
    bool claimed = false;
    if (!found.claimed_elsewhere) {
      COLLAGE_ASSIGN_OR_RETURN(claimed, database_.Claim(key, measurer_.MeasuresInThisProcess()));
    }
    if (!claimed) {
      // Another optimizer is measuring it: its record is coming (or its claim lapses).
      COLLAGE_RETURN_IF_ERROR(WaitForOthers());
      continue;
    }
    StatusOr<CostRecord> measured = measure();
    // Interrupted in flight: nothing is stored, and the claim goes when the database closes
    // (CostDatabase removes this process's claims then), so the candidate is not taken for
    // one that crashed.
    if (!measured.ok()) {
      return measured.status().code() == StatusCode::kCancelled ? Interrupted()
                                                                : measured.status();
    }
    CostRecord record = std::move(*measured);
    ++measured_;
    COLLAGE_RETURN_IF_ERROR(database_.Put(key, record));
    return record;
  }
}

Status MeasuredCostModel::PriceCandidates(std::vector<SearchCandidate>& candidates,
                                          std::vector<CostRecord>* records) {
  records->assign(candidates.size(), CostRecord());
  std::vector<CostKey> keys;
  std::map<std::string, std::vector<size_t>> by_key;
  std::vector<std::string> order;  // distinct keys by first candidate
  for (size_t i = 0; i < candidates.size(); ++i) {
    keys.push_back(KeyFor(candidates[i]));
    auto [it, inserted] = by_key.try_emplace(KeyText(keys.back()));
    if (inserted) order.push_back(it->first);
    it->second.push_back(i);
  }
  distinct_candidates_ = static_cast<int>(order.size());
  // Measured node set by node set, so that each node set's reference outputs are computed
  // once and dropped before the next.
  std::stable_sort(order.begin(), order.end(), [&](const std::string& a, const std::string& b) {
    return candidates[by_key[a].front()].nodes.ToString() < candidates[by_key[b].front()].nodes.ToString();
  });
  int done = 0;
  Report("candidates", done, distinct_candidates_);

  // A record fits a candidate when it has a layout per input and output of its group (a
  // stored one that does not was written by another collage: measured again).
  auto fits = [&](const SearchCandidate& candidate, const CostRecord& record) {
    if (!record.valid) return true;
    const CompileRequest request =
        CompileRequest::For(graph_, candidate.nodes, candidate.rule, context_);
    return record.input_layouts.size() == request.inputs.size() &&
           record.output_layouts.size() == request.outputs.size();
  };
  auto settle = [&](const std::string& text, const CostRecord& record) {
    if (!record.valid) ++invalid_;
    for (size_t i : by_key[text]) {
      (*records)[i] = record;
      candidates[i].cost_ms = record.median_ms;
      candidates[i].input_layouts = record.input_layouts;
      candidates[i].output_layouts = record.output_layouts;
    }
    Report("candidates", ++done, distinct_candidates_);
  };
  auto job_for = [&](const std::string& text) {
    const SearchCandidate& representative = candidates[by_key[text].front()];
    CandidateJob job;
    job.graph = &graph_;
    job.nodes = representative.nodes;
    job.backend = representative.backend;
    job.rule = representative.rule;
    job.precision = representative.precision;
    job.threads = threads_;
    // A reduced precision is held to its rounding's bound here; the plan's outputs are then
    // checked end to end against the user's tolerance.
    job.tolerance = std::max(ToleranceFor(graph_, representative.nodes),
                             GroupErrorBound(representative.precision));
    job.settings = SettingsFor(representative.nodes);
    return job;
  };

  // Claimed and measured a batch at a time, so that optimizers sharing the database share
  // the work (each claims what is left) and a measurer that measures several at once gets
  // enough to do. A key another optimizer has claimed is looked up again after the rest.
  const size_t batch_size = std::max<size_t>(8, 2 * static_cast<size_t>(measurer_.parallelism()));
  std::vector<std::string> pending = order;
  while (!pending.empty()) {
    std::vector<std::string> deferred;
    bool progressed = false;
    size_t next = 0;
    while (next < pending.size()) {
      std::vector<std::string> batch;
      std::vector<CandidateJob> jobs;
      while (next < pending.size() && jobs.size() < batch_size) {
        const std::string& text = pending[next++];
        const SearchCandidate& representative = candidates[by_key[text].front()];
        const CostKey& key = keys[by_key[text].front()];
        if (registry_.Find(representative.backend) == nullptr)
          return NotFound("no backend named '{}'", representative.backend);
        COLLAGE_ASSIGN_OR_RETURN(CostLookup found,
                                 database_.Lookup(key, measurer_.time_limit_seconds()));
        if (found.record.has_value() && fits(representative, *found.record)) {
          ++cache_hits_;
          ++candidates_found_;
          progressed = true;
          settle(text, *found.record);
          continue;
        }
        bool claimed = false;
        if (!found.claimed_elsewhere) {
          COLLAGE_ASSIGN_OR_RETURN(claimed,
                                   database_.Claim(key, measurer_.MeasuresInThisProcess()));
          // A stored record that does not fit is replaced, whoever holds it.
          claimed = claimed || found.record.has_value();
        }
        if (!claimed) {
          deferred.push_back(text);
          continue;
        }
        batch.push_back(text);
        jobs.push_back(job_for(text));
      }
      if (jobs.empty()) continue;
      // Stopping here loses nothing: every finished measurement is already stored.
      if (cancel_.cancelled()) return Interrupted();
      progressed = true;
      Status measured = measurer_.CandidatesInBatch(jobs, [&](size_t i, const CostRecord& record) {
        ++measured_;
        ++candidates_measured_;
        COLLAGE_RETURN_IF_ERROR(database_.Put(keys[by_key[batch[i]].front()], record));
        COLLAGE_RETURN_IF_ERROR(database_.RenewClaims());
        settle(batch[i], record);
        return Status();
      });
      // Interrupted in flight: what finished is stored; the claims left go when the
      // database closes, so no candidate is taken for one that crashed.
      if (!measured.ok()) {
        return measured.code() == StatusCode::kCancelled ? Interrupted() : measured;
      }
    }
    if (!deferred.empty() && !progressed) {
      COLLAGE_RETURN_IF_ERROR(WaitForOthers());
    }
    pending = std::move(deferred);
  }
  return Status();
}

Status MeasuredCostModel::PriceConversions(const std::vector<SearchCandidate>& candidates) {
  std::vector<std::vector<Layout>> produced(static_cast<size_t>(graph_.num_values()));
  std::vector<std::vector<Layout>> wanted(static_cast<size_t>(graph_.num_values()));
  auto add = [](std::vector<Layout>& list, const Layout& layout) {
    if (std::find(list.begin(), list.end(), layout) == list.end()) list.push_back(layout);
  };
  for (ValueId in : graph_.inputs()) add(produced[static_cast<size_t>(in)], Layout::Plain());
  for (ValueId out : graph_.outputs()) add(wanted[static_cast<size_t>(out)], Layout::Plain());
  for (const SearchCandidate& c : candidates) {
    for (size_t i = 0; i < c.inputs.size(); ++i) add(wanted[static_cast<size_t>(c.inputs[i])], c.input_layouts[i]);
    for (size_t i = 0; i < c.outputs.size(); ++i) add(produced[static_cast<size_t>(c.outputs[i])], c.output_layouts[i]);
  }
  struct Conversion {
    TensorType type;
    Layout from, to;
  };
  std::map<std::tuple<std::string, std::string, std::string>, Conversion> needed;
  for (ValueId v = 0; v < graph_.num_values(); ++v) {
    const TensorType& type = graph_.value(v).type;
    for (const Layout& from : produced[static_cast<size_t>(v)]) {
      for (const Layout& to : wanted[static_cast<size_t>(v)]) {
        if (from == to || from.SameBytesAs(to, type)) continue;
        needed.try_emplace({type.ToString(), LayoutToText(from), LayoutToText(to)}, Conversion{type, from, to});
      }
    }
  }
  auto version_of = [&](const Layout& layout) {
    const std::string& owner = layout.owner();
    const Backend* backend = owner.empty() ? nullptr : registry_.Find(owner);
    return backend != nullptr ? backend->version() : std::string("collage");
  };
  int done = 0;
  const int total = static_cast<int>(needed.size());
  Report("conversions", done, total);
  for (const auto& entry : needed) {
    const auto& text = entry.first;
    const Conversion& conversion = entry.second;  // a plain reference: lambdas may capture it
    CostKey key;
    key.device = DeviceFingerprint();
    key.backend = "layout-conversion";
    key.backend_version = version_of(conversion.from) + " -> " + version_of(conversion.to);
    key.signature = std::get<0>(text) + "|" + std::get<1>(text) + "->" + std::get<2>(text);
    key.threads = threads_;
    key.method = MeasureMethodKey(settings_);
    COLLAGE_ASSIGN_OR_RETURN(CostRecord record, Resolve(key, [&] {
      return measurer_.Conversion(conversion.type, conversion.from, conversion.to, threads_, settings_);
    }));
    conversion_cost_[text] = record.cost();
    Report("conversions", ++done, total);
  }
  return Status();
}

double MeasuredCostModel::Transition(ValueId value, const Layout& from, const Layout& to) const {
  const TensorType& type = graph_.value(value).type;
  if (from == to || from.SameBytesAs(to, type)) return 0;
  // The search adds doubles: a conversion that cannot be built (or was not priced) is one no
  // placement can afford.
  auto it = conversion_cost_.find({type.ToString(), LayoutToText(from), LayoutToText(to)});
  return it != conversion_cost_.end() && it->second.is_value()
             ? it->second.ms()
             : std::numeric_limits<double>::infinity();
}

Status MeasuredCostModel::PriceLibrarySwitches(const std::vector<SearchCandidate>& candidates) {
  std::map<std::string, std::vector<const SearchCandidate*>> by_backend;
  for (const SearchCandidate& c : candidates) by_backend[c.backend].push_back(&c);
  std::map<std::string, std::vector<const SearchCandidate*>> probes;
  for (const auto& [backend, offered] : by_backend) probes[backend] = ProbeKernelsOf(offered, kProbeMs);
  std::vector<std::pair<std::string, std::string>> pairs;
  for (auto a = probes.begin(); a != probes.end(); ++a) {
    for (auto b = std::next(a); b != probes.end(); ++b) pairs.push_back({a->first, b->first});
  }
  auto version_of = [&](const std::string& backend) {
    const Backend* found = registry_.Find(backend);
    return found != nullptr ? found->version() : std::string();
  };
  auto key_of = [&](const std::string& from, const std::string& to) {
    CostKey key;
    key.device = DeviceFingerprint();
    key.backend = "library-switch";
    key.backend_version = version_of(from) + " -> " + version_of(to);
    key.signature = from + "->" + to;
    for (const std::string& side : {from, to}) {
      for (const SearchCandidate* probe : probes[side]) key.signature += "|" + KeyFor(*probe).signature;
    }
    key.threads = threads_;
    key.method = SwitchProbeMethodKey(WarmSettings());
    return key;
  };
  int done = 0;
  Report("library switches", done, static_cast<int>(pairs.size()));
  for (const auto& [a, b] : pairs) {
    const CostKey a_to_b = key_of(a, b), b_to_a = key_of(b, a);
    LibrarySwitchRecords records;
    for (;;) {
      COLLAGE_ASSIGN_OR_RETURN(CostLookup found_ab, database_.Lookup(a_to_b));
      COLLAGE_ASSIGN_OR_RETURN(CostLookup found_ba, database_.Lookup(b_to_a));
      if (found_ab.record && found_ba.record) {
        cache_hits_ += 2;
        records = {*found_ab.record, *found_ba.record};
        break;
      }
      if (cancel_.cancelled()) return Interrupted();
      // The pair is measured together, under the claim of its first key; the probes run in
      // this process.
      bool claimed = false;
      if (!found_ab.claimed_elsewhere) {
        COLLAGE_ASSIGN_OR_RETURN(claimed, database_.Claim(a_to_b, /*in_this_process=*/true));
        claimed = claimed || found_ab.record.has_value();  // b_to_a alone is missing
      }
      if (!claimed) {
        COLLAGE_RETURN_IF_ERROR(WaitForOthers());
        continue;
      }
      auto kernels = [&](const std::string& backend) {
        std::vector<ProbeKernel> list;
        for (const SearchCandidate* probe : probes[backend]) {
          list.push_back({registry_.Find(backend),
                          CompileRequest::For(graph_, probe->nodes, probe->rule, context_)});
        }
        return list;
      };
      if (registry_.Find(a) == nullptr || registry_.Find(b) == nullptr) {
        return NotFound("a backend of the library-switch probes is gone");
      }
      records = MeasureLibrarySwitch(kernels(a), kernels(b), registry_, WarmSettings());
      measured_ += 2;
      COLLAGE_RETURN_IF_ERROR(database_.Put(a_to_b, records.a_to_b));
      COLLAGE_RETURN_IF_ERROR(database_.Put(b_to_a, records.b_to_a));
      break;
    }
    // A probe that failed prices the switch at nothing rather than forbidding either backend.
    switch_ms_[{a, b}] = records.a_to_b.valid ? records.a_to_b.median_ms : 0;
    switch_ms_[{b, a}] = records.b_to_a.valid ? records.b_to_a.median_ms : 0;
    Report("library switches", ++done, static_cast<int>(pairs.size()));
  }
  return Status();
}

Status MeasuredCostModel::PriceStepsInRun(const std::vector<SearchCandidate>& candidates) {
  std::map<std::string, std::vector<const SearchCandidate*>> by_backend;
  for (const SearchCandidate& c : candidates) by_backend[c.backend].push_back(&c);
  std::map<std::string, double> extra;
  int done = 0;
  Report("steps in a run", done, static_cast<int>(by_backend.size()));
  for (const auto& entry : by_backend) {
    const std::string& backend = entry.first;  // not a structured binding: a lambda uses it
    const std::vector<const SearchCandidate*> probes = ProbeKernelsOf(entry.second, kProbeMs);
    Report("steps in a run", ++done, static_cast<int>(by_backend.size()));
    if (probes[0] == probes[1] || registry_.Find(backend) == nullptr) continue;
    CostKey key;
    key.device = DeviceFingerprint();
    key.backend = "step-in-run";
    key.backend_version = registry_.Find(backend)->version();
    key.signature = backend + "|" + KeyFor(*probes[0]).signature + "|" + KeyFor(*probes[1]).signature;
    key.threads = threads_;
    key.method = SwitchProbeMethodKey(WarmSettings());
    COLLAGE_ASSIGN_OR_RETURN(CostRecord record, Resolve(key, [&]() -> StatusOr<CostRecord> {
      // Each kernel as its own "library": the probe times it after the other kernel and after
      // itself.
      const Backend* found = registry_.Find(backend);
      const ProbeKernel first{
          found, CompileRequest::For(graph_, probes[0]->nodes, probes[0]->rule, context_)};
      const ProbeKernel second{
          found, CompileRequest::For(graph_, probes[1]->nodes, probes[1]->rule, context_)};
      const LibrarySwitchRecords turns = MeasureLibrarySwitch({first, first}, {second, second}, registry_, WarmSettings());
      if (!turns.a_to_b.valid) return turns.a_to_b;
      CostRecord mean = turns.a_to_b;
      mean.median_ms = 0.5 * (turns.a_to_b.median_ms + turns.b_to_a.median_ms);
      mean.p90_ms = mean.median_ms;
      return mean;
    }));
    // A probe that failed adds nothing rather than penalising the backend.
    step_ms_[backend] = record.valid ? record.median_ms : 0;
  }
  return Status();
}

double MeasuredCostModel::StepInRun(const std::string& backend) const {
  auto it = step_ms_.find(backend);
  return it == step_ms_.end() ? 0 : it->second;
}

MeasureSettings MeasuredCostModel::WarmSettings() const {
  MeasureSettings warm = settings_;
  warm.scrub_bytes = 0;
  return warm;
}

double MeasuredCostModel::LibrarySwitch(const std::string& from, const std::string& to) const {
  auto it = switch_ms_.find({from, to});
  return from == to || it == switch_ms_.end() ? 0 : it->second;
}

}  // namespace collage
