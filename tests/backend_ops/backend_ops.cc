// backend_ops: the differential test of every backend against the reference kernels, in the
// spirit of ggml's test-backend-ops. For every registered backend and each of its rules and
// fusions, it collects the candidate groups the rule offers on the zoo models and on small
// random graphs, tests each distinct group (by signature) once, compiles it through
// KernelRunner (layout conversions included), runs it on random inputs and compares every
// output with RunReferenceGroup. A group the backend's rule offers but its Compile refuses is
// a failure too: rules must describe exactly what Compile accepts. One exception: an engine's
// (ONNX Runtime's, OpenVINO's) quantized group beyond its steps on a CPU without VNNI is
// reported as DEV, not failed (CheckItem says why).
//
// --nan-contract=report|enforce also runs every group on inputs holding NaN, infinities and
// subnormals and keeps a verdict per rule (nan_contract.h): a table at the end (and in
// --nan-report FILE); `enforce` fails the run on a deviating rule that declares it meets the
// contract (Rule::PropagatesNonFinite) and is not named by --nan-exempt or --nan-exempt-file;
// undeclared rules are reported, never failed. The default, `off`, runs only the finite
// inputs.
//
//   collage_backend_ops [--backend-path DIR] [--backend NAME] [--rule NAME] [--seed N]
//                       [--max-per-rule N] [--random N] [--models a,b] [--threads N] [--list]
//                       [--nan-contract off|report|enforce] [--nan-report FILE]
//                       [--nan-exempt BACKEND:RULE] [--nan-exempt-file FILE]
#include <fmt/format.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "collage/available_backends.h"
#include "collage/sdk/backend.h"
#include "group_check.h"
#include "ir/output_judgement.h"
#include "nan_contract.h"
#include "random_graphs.h"
#include "runtime/kernel_runner.h"
#include "runtime/threading.h"
#include "zoo/zoo.h"

namespace collage::backend_ops {
namespace {

struct Options {
  std::vector<std::string> plugin_dirs;
  std::vector<std::string> backends;  // empty: all
  std::vector<std::string> rules;     // empty: all
  uint64_t seed = 1;
  int random_per_family = 16;
  std::vector<std::string> models{"resnet50", "mobilenetv2", "bert_base"};
  int max_per_rule = 12;
  int threads = 1;
  bool list = false;
  std::string nan_contract = "off";  // off, report or enforce
  std::string nan_report;            // file the verdict table is written to; empty: stdout only
  std::vector<std::string> nan_exempt;
  std::string nan_exempt_file;
};

struct Item {
  const SourceGraph* source = nullptr;
  std::string rule;
  Precision precision = Precision::kFloat32;
  SubGraph nodes;
  std::string signature;
  double flops = 0;
};

struct Totals {
  int passed = 0;
  int failed = 0;
  int engine_deviations = 0;  // see CheckItem: reported, refused by measurement, not failed
  std::vector<std::string> not_compiled;  // "mkl (not built: <reason>)"
};

bool Selected(const std::vector<std::string>& filter, const std::string& name) {
  return filter.empty() || std::find(filter.begin(), filter.end(), name) != filter.end();
}

// Up to `cap` items sorted by arithmetic: the smallest, the largest and evenly spaced ones
// between.
std::vector<const Item*> SpreadBySize(std::vector<const Item*> items, int cap) {
  std::stable_sort(items.begin(), items.end(),
                   [](const Item* a, const Item* b) { return a->flops < b->flops; });
  if (static_cast<int>(items.size()) <= cap) return items;
  if (cap <= 1) return {items.begin(), items.begin() + cap};
  std::vector<const Item*> picked;
  const double step = static_cast<double>(items.size() - 1) / (cap - 1);
  for (int i = 0; i < cap; ++i) picked.push_back(items[static_cast<size_t>(std::lround(i * step))]);
  return picked;
}

// The groups tested for one rule: half from the zoo models (real shapes, large sizes), half
// from the random graphs (corner cases of attributes and shapes), each spread across sizes;
// a side with too few groups leaves its share to the other. cap <= 0: all.
std::vector<const Item*> Spread(const std::vector<Item>& items, int cap) {
  std::vector<const Item*> zoo, random;
  for (const Item& item : items)
    (item.source->name.rfind("random.", 0) == 0 ? random : zoo).push_back(&item);
  if (cap <= 0 || static_cast<int>(items.size()) <= cap) {
    zoo.insert(zoo.end(), random.begin(), random.end());
    return SpreadBySize(zoo, static_cast<int>(zoo.size()));
  }
  int random_quota = std::min<int>((cap + 1) / 2, static_cast<int>(random.size()));
  const int zoo_quota = std::min<int>(cap - random_quota, static_cast<int>(zoo.size()));
  random_quota = std::min<int>(cap - zoo_quota, static_cast<int>(random.size()));
  std::vector<const Item*> picked = SpreadBySize(random, random_quota);
  std::vector<const Item*> from_zoo = SpreadBySize(zoo, zoo_quota);
  picked.insert(picked.end(), from_zoo.begin(), from_zoo.end());
  return picked;
}

// Every distinct candidate of every rule of `backend`, in every precision the rule offers on
// this CPU, grouped by rule and precision in declaration order (rules, then fusions).
std::vector<std::pair<std::string, std::vector<Item>>> CollectItems(
    const Backend& backend, const std::vector<SourceGraph>& sources, const Options& options) {
  std::vector<std::pair<std::string, std::vector<Item>>> by_rule;
  auto slot = [&](const std::string& rule) -> std::vector<Item>& {
    for (auto& entry : by_rule) {
      if (entry.first == rule) return entry.second;
    }
    by_rule.emplace_back(rule, std::vector<Item>{});
    return by_rule.back().second;
  };
  for (const Rule& rule : backend.rules().rules()) {
    if (Selected(options.rules, rule.name())) slot(rule.name());
  }
  for (const Fusion& fusion : backend.rules().fusions()) {
    if (Selected(options.rules, fusion.name())) slot(fusion.name());
  }
  std::map<std::string, std::set<std::string>> seen;
  for (const SourceGraph& source : sources) {
    for (Candidate& candidate : EnumerateCandidates(source.graph, backend.rules(), false,
                                                    {Precision::kFloat32, Precision::kBfloat16})) {
      if (!Selected(options.rules, candidate.rule)) continue;
      std::string signature = GroupSignature(source.graph, candidate.nodes);
      const std::string label = RuleInPrecision(candidate.rule, candidate.precision);
      if (!seen[label].insert(signature).second) continue;
      Item item;
      item.source = &source;
      item.rule = candidate.rule;
      item.precision = candidate.precision;
      item.flops = GroupFlops(source.graph, candidate.nodes);
      item.nodes = std::move(candidate.nodes);
      item.signature = std::move(signature);
      slot(label).push_back(std::move(item));
    }
  }
  return by_rule;
}

// Prints one line per kind of special input the group deviates on.
void PrintDeviations(const std::string& head, const std::string& tail,
                     const std::vector<SpecialOutcome>& outcomes) {
  for (const SpecialOutcome& o : outcomes) {
    std::string how = !o.error.empty()             ? o.error
                      : !o.reference_error.empty() ? "the reference failed: " + o.reference_error
                                                   : o.check.deviation;
    if (how.empty()) continue;
    fmt::print("NAN   {}  {}: {}  {}\n", head, SpecialKindName(o.kind), how, tail);
  }
}

// Whether this CPU multiplies 8-bit integers into 32-bit sums directly: AVX512-VNNI
// (CPUID leaf 7 subleaf 0, ECX bit 11) or AVX-VNNI (leaf 7 subleaf 1, EAX bit 4); AMX CPUs
// have them too. Read from CPUID: not every compiler's __builtin_cpu_supports knows both.
// Other CPUs' 8-bit dot products (Arm's SDOT) sum exactly: true.
bool CpuHasInt8DotProduct() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) == 0) return false;
  if ((ecx & (1u << 11)) != 0) return true;
  if (__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) == 0) return false;
  return (eax & (1u << 4)) != 0;
#else
  return true;
#endif
}

enum class Outcome { kPass, kFail, kEngineDeviation };

// Compiles, runs and compares one group; prints its line. With `nan`, also runs it on the
// special inputs and records the outcome there.
Outcome CheckItem(const Backend& backend, const Item& item, const Options& options,
                  NanContractTable* nan) {
  const Graph& graph = item.source->graph;
  CompileRequest request = CompileRequest::For(graph, item.nodes, item.rule, options.threads);
  request.precision = item.precision;
  // A group in a reduced precision is held to its rounding's bound, as measurement holds it.
  const double tolerance =
      std::max(ToleranceFor(graph, item.nodes), GroupErrorBound(item.precision));
  const std::string head =
      fmt::format("{}  {}  {} -> {}", backend.name(), RuleInPrecision(item.rule, item.precision),
                  DescribeTypes(graph, request.inputs), DescribeTypes(graph, request.outputs));
  const std::string tail =
      fmt::format("{}  ({})", DescribeOps(graph, item.nodes), item.source->name);
  auto fail = [&](const std::string& why) {
    fmt::print("FAIL  {}  tol={:.0e}  {}\n      {}\n      group: {}\n", head, tolerance, tail, why,
               item.signature);
    std::fflush(stdout);
    return Outcome::kFail;
  };
  try {
    StatusOr<std::unique_ptr<KernelRunner>> runner =
        KernelRunner::Create(backend, request, GlobalBackendRegistry());
    if (!runner.ok()) return fail("compile: " + runner.status().message());
    // Inputs depend on the seed and the group only, not on which groups ran before.
    std::seed_seq seq{static_cast<uint32_t>(options.seed),
                      static_cast<uint32_t>(std::hash<std::string>{}(item.signature))};
    std::mt19937 rng(seq);
    std::vector<Tensor> inputs = RandomInputs(request, rng);
    // The NaN/Inf contract is a float32 rule's (reduced precisions are not declared to it).
    if (nan != nullptr && item.precision == Precision::kFloat32) {
      // Derived from the finite inputs, so the finite check below sees the same ones.
      std::vector<SpecialOutcome> outcomes = CheckSpecialValues(**runner, inputs, tolerance);
      PrintDeviations(head, tail, outcomes);
      nan->Add(backend.name(), item.rule, backend.rules().MeetsNonFiniteContract(item.rule),
               fmt::format("{} {} ({})", DescribeOps(graph, item.nodes),
                           DescribeTypes(graph, request.inputs), item.source->name),
               outcomes);
    }
    StatusOr<std::vector<Tensor>> want = RunReferenceGroup(request, inputs);
    if (!want.ok()) return fail("reference: " + want.status().message());
    StatusOr<std::vector<Tensor>> got = (*runner)->Run(inputs);
    if (!got.ok()) return fail("run: " + got.status().message());
    if (got->size() != want->size()) {
      return fail(fmt::format("{} outputs, the reference has {}", got->size(), want->size()));
    }
    double error = 0;
    std::string problem;
    // Quantized outputs may round a step from the reference's at each of their roundings
    // (ir/output_judgement.h, as measurement judges them).
    bool pass = true;
    bool quantized = false;
    for (size_t i = 0; i < got->size() && problem.empty(); ++i) {
      const OutputJudgement j =
          JudgeOutput(graph, request.outputs[i], &item.nodes, (*got)[i], (*want)[i], tolerance);
      if (!j.problem.empty()) problem = fmt::format("output {}: {}", i, j.problem);
      error = std::max(error, j.error);
      quantized = quantized || j.quantized;
      pass = pass && j.ok;
    }
    if (!problem.empty()) return fail(problem);
    // Quantized groups say whether they rounded exactly as the reference or within its steps.
    const std::string rounding = !quantized   ? ""
                                 : error == 0 ? "  exact"
                                 : pass       ? "  within its steps"
                                              : "  beyond its steps";
    // An engine computes a quantized group with its own integer kernels. Without VNNI those
    // add uint8 x int8 pairs in saturating int16 (vpmaddubsw) and run int8 inputs with halved
    // weights, so full-range weights or int8 activations may land beyond the reference's
    // steps. Collage cannot change an engine's arithmetic; measurement refuses such a group
    // (cost/measure.cc checks every candidate's outputs), so it is reported, not failed. With
    // VNNI the products are exact and a deviation fails.
    const bool engine_deviation =
        !pass && quantized && backend.graph_level() && !CpuHasInt8DotProduct();
    fmt::print("{}  {}  err={:.1e}  tol={:.0e}{}  {}\n",
               pass               ? "PASS"
               : engine_deviation ? "DEV "
                                  : "FAIL",
               head, error, tolerance, rounding, tail);
    if (!pass) fmt::print("      group: {}\n", item.signature);
    if (engine_deviation) {
      fmt::print(
          "      the engine's own int8 arithmetic on a CPU without VNNI; measurement "
          "refuses this group\n");
    }
    std::fflush(stdout);
    return pass ? Outcome::kPass : engine_deviation ? Outcome::kEngineDeviation : Outcome::kFail;
  } catch (const std::exception& e) {
    return fail(fmt::format("exception escaped the backend: {}", e.what()));
  }
}

// Prints the verdict table (and writes it to --nan-report). True when enforcing and some
// rule that is not exempt deviates.
bool ReportNanContract(const NanContractTable& table, const NanExemptions& exempt,
                       const Options& options) {
  const std::string text =
      fmt::format("NaN/Inf contract, seed {}:\n\n{}", options.seed, table.Render(exempt));
  fmt::print("\n{}", text);
  if (!options.nan_report.empty()) {
    std::ofstream out(options.nan_report);
    out << text;
    if (!out) fmt::print(stderr, "backend_ops: cannot write '{}'\n", options.nan_report);
  }
  if (std::vector<std::string> unused = table.UnmatchedExemptions(exempt); !unused.empty()) {
    fmt::print("backend_ops: exemptions naming no rule tested in this run: {}\n",
               fmt::join(unused, ", "));
  }
  const std::vector<std::string> violations = table.Violations(exempt);
  if (options.nan_contract != "enforce" || violations.empty()) return false;
  fmt::print(
      "backend_ops: {} rules declare that they meet the NaN/Inf contract (PropagatesNonFinite) "
      "but deviate, and are not exempt: {}. Fix the kernel, or drop the declaration (strict "
      "NaN/Inf mode then runs those nodes on native)\n",
      violations.size(), fmt::join(violations, ", "));
  return true;
}

int Main(const Options& options) {
  BackendRegistry& registry = GlobalBackendRegistry();
  for (const std::string& dir : options.plugin_dirs) {
    if (Status s = registry.LoadPluginsFrom(dir); !s.ok()) {
      fmt::print(stderr, "backend_ops: {}\n", s.message());
      return 2;
    }
  }
  for (const std::string& name : options.backends) {
    if (registry.Find(name) == nullptr) {
      std::vector<std::string> known;
      for (const Backend* b : registry.backends()) known.push_back(b->name());
      fmt::print(stderr, "backend_ops: no backend '{}' (registered: {})\n", name,
                 fmt::join(known, ", "));
      return 2;
    }
  }
  NanExemptions exempt;
  for (const std::string& entry : options.nan_exempt) exempt.Add(entry);
  if (std::string error;
      !options.nan_exempt_file.empty() && !exempt.AddFile(options.nan_exempt_file, &error)) {
    fmt::print(stderr, "backend_ops: {}\n", error);
    return 2;
  }
  ApplyThreadPolicy(options.threads);

  const auto start = std::chrono::steady_clock::now();
  std::vector<SourceGraph> sources;
  for (const std::string& model : options.models) {
    StatusOr<Graph> graph = BuildZooModel(model);
    if (!graph.ok()) {
      fmt::print(stderr, "backend_ops: {}\n", graph.status().message());
      return 2;
    }
    sources.push_back({model, std::move(*graph)});
  }
  std::vector<SourceGraph> random = RandomGraphs(options.seed, options.random_per_family);
  const size_t num_random = random.size();
  for (SourceGraph& g : random) sources.push_back(std::move(g));
  fmt::print("backend_ops: seed {}, {} zoo models + {} random graphs\n", options.seed,
             options.models.size(), num_random);

  Totals totals;
  NanContractTable nan_table;
  NanContractTable* nan = options.nan_contract == "off" ? nullptr : &nan_table;
  // The backend folders this build left out: the summary names them, with the reason.
  for (const SkippedBackend& skipped : SkippedBuiltinBackends()) {
    if (Selected(options.backends, skipped.name)) {
      totals.not_compiled.push_back(skipped.name + " (not built: " + skipped.reason + ")");
    }
  }
  int listed = 0;
  for (const Backend* backend : registry.backends()) {
    if (!Selected(options.backends, backend->name())) continue;
    fmt::print("== {} ({}): {} rules\n", backend->name(), backend->version(),
               backend->rules().size());
    for (const auto& [rule, items] : CollectItems(*backend, sources, options)) {
      // A rule's offers in a reduced precision run the float32 offers' code but for the
      // operands' conversion and the primitive's element type: a third as many cover them.
      const bool reduced = !items.empty() && items.front().precision != Precision::kFloat32;
      const int cap = reduced && options.max_per_rule > 0 ? (options.max_per_rule + 2) / 3
                                                          : options.max_per_rule;
      std::vector<const Item*> picked = Spread(items, cap);
      if (items.empty()) {
        fmt::print("      {}  {}: no candidate in the zoo models or random graphs\n",
                   backend->name(), rule);
      }
      for (const Item* item : picked) {
        if (options.list) {
          const Graph& graph = item->source->graph;
          CompileRequest request = CompileRequest::For(graph, item->nodes, item->rule, 1);
          fmt::print("GROUP  {}  {}  {} -> {}  {}  ({})  {:.3g} MFLOP\n", backend->name(), rule,
                     DescribeTypes(graph, request.inputs), DescribeTypes(graph, request.outputs),
                     DescribeOps(graph, item->nodes), item->source->name, item->flops / 1e6);
          ++listed;
          continue;
        }
        switch (CheckItem(*backend, *item, options, nan)) {
          case Outcome::kPass: ++totals.passed; break;
          case Outcome::kFail: ++totals.failed; break;
          case Outcome::kEngineDeviation: ++totals.engine_deviations; break;
        }
      }
      if (static_cast<int>(items.size()) > static_cast<int>(picked.size())) {
        fmt::print("      {}  {}: {} of {} distinct groups selected (--max-per-rule)\n",
                   backend->name(), rule, picked.size(), items.size());
      }
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (options.list) {
    fmt::print("backend_ops: {} groups listed ({:.1f} s)\n", listed, seconds);
    return 0;
  }
  std::string reasons =
      totals.not_compiled.empty() ? "" : fmt::format(": {}", fmt::join(totals.not_compiled, ", "));
  fmt::print(
      "backend_ops: {} passed, {} failed, {} engine deviations (DEV), {} not compiled{} ({:.1f} "
      "s)\n",
      totals.passed, totals.failed, totals.engine_deviations, totals.not_compiled.size(), reasons,
      seconds);
  if (nan == nullptr) return totals.failed > 0 ? 1 : 0;
  return ReportNanContract(nan_table, exempt, options) || totals.failed > 0 ? 1 : 0;
}

}  // namespace
}  // namespace collage::backend_ops

int main(int argc, char** argv) {
  collage::backend_ops::Options options;
  CLI::App app{"Differential test of every backend's rules against the reference kernels"};
  app.add_option("--backend-path", options.plugin_dirs,
                 "Load backend plug-ins (lib*.so) from DIR first");
  app.add_option("--backend", options.backends, "Test only this backend (repeatable)");
  app.add_option("--rule", options.rules, "Test only this rule or fusion (repeatable)");
  app.add_option("--seed", options.seed, "Seed of the random graphs and inputs")
      ->capture_default_str();
  app.add_option("--random", options.random_per_family, "Random graphs per op family")
      ->capture_default_str();
  app.add_option("--models", options.models, "Zoo models to take groups from ('none': no model)")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--max-per-rule", options.max_per_rule,
                 "Groups tested per (backend, rule), spread across sizes (0: all)")
      ->capture_default_str();
  app.add_option("--threads", options.threads, "Threads per kernel")->capture_default_str();
  app.add_flag("--list", options.list, "Print the groups that would be tested, run nothing");
  app.add_option("--nan-contract", options.nan_contract,
                 "Also check every group on NaN, infinities and subnormals: report the verdicts, "
                 "or enforce them (fail on a deviating rule that declares it meets the contract "
                 "and is not exempt)")
      ->check(CLI::IsMember({"off", "report", "enforce"}))
      ->capture_default_str();
  app.add_option("--nan-report", options.nan_report, "Write the NaN/Inf verdict table to FILE");
  app.add_option("--nan-exempt", options.nan_exempt,
                 "BACKEND:RULE (or BACKEND:*) declared to meet the contract that "
                 "--nan-contract=enforce lets deviate")
      ->delimiter(',');
  app.add_option("--nan-exempt-file", options.nan_exempt_file,
                 "File of BACKEND:RULE lines exempt from --nan-contract=enforce ('#' comments)");
  CLI11_PARSE(app, argc, argv);
  options.models.erase(std::remove(options.models.begin(), options.models.end(), "none"),
                       options.models.end());
  return collage::backend_ops::Main(options);
}
