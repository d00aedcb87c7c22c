// The executable's cost per step, apart from the kernels' work: a chain of N Adds on 16
// floats, each its own step, run many times; prints nanoseconds per step (the median of
// several timed batches), twice: on the native backend (the run loop plus the reference
// kernel's fixed cost: its tensor views, broadcast plan, dispatch) and on a bench-only backend
// whose kernel is a bare 16-float loop (the run loop alone: binding, one virtual call, status
// checks).
//
//   build/step_overhead [--steps 1000] [--runs 200] [--batches 9]
//
// Not a test: the machine's speed varies.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "collage/available_backends.h"
#include "collage/sdk/backend.h"
#include "ops/graph_builder.h"
#include "runtime/executable.h"

namespace collage {
namespace {

// y = x + 1 over 16 floats (the graph's constant operand is not read: only the cost matters),
// nothing else: what is left of a step is the executable's own cost.
class BareAddKernel : public Kernel {
 public:
  BareAddKernel() {
    input_layouts_ = {Layout::Plain()};
    output_layouts_ = {Layout::Plain()};
  }
  Status Run(const KernelBuffers& buffers) const override {
    const float* a = static_cast<const float*>(buffers.inputs[0]);
    float* y = static_cast<float*>(buffers.outputs[0]);
    for (int i = 0; i < 16; ++i) y[i] = a[i] + 1.0f;
    return Status();
  }
};

class BareAddBackend : public Backend {
 public:
  BareAddBackend() {
    rules_.Add(Rule("add", Op("Add")).Compiles([](const CompileRequest&, const Match&) {
      return StatusOr<std::unique_ptr<Kernel>>(std::make_unique<BareAddKernel>());
    }));
  }
  std::string name() const override { return "bench_bare_add"; }
  std::string version() const override { return "1"; }
  const RuleSet& rules() const override { return rules_; }

 private:
  RuleSet rules_;
};

int Flag(int argc, char** argv, const char* name, int fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], name) == 0) return std::max(1, std::atoi(argv[i + 1]));
  }
  return fallback;
}

StatusOr<Graph> AddChain(int steps) {
  GraphBuilder b("add_chain");
  ValueId x = b.Input("x", DType::kFloat32, {16});
  ValueId c = b.RandomNormal("c", {16}, 1.0f);
  for (int i = 0; i < steps; ++i) x = b.Node("Add", {x, c});
  b.Output(x, "y");
  return std::move(b).Build();
}

int Measure(const Graph& graph, const std::string& backend, int runs, int batches);

int Main(int argc, char** argv) {
  const int steps = Flag(argc, argv, "--steps", 1000);
  const int runs = Flag(argc, argv, "--runs", 200);
  const int batches = Flag(argc, argv, "--batches", 9);
  StatusOr<Graph> graph = AddChain(steps);
  if (!graph.ok()) {
    std::fprintf(stderr, "%s\n", graph.status().ToString().c_str());
    return 1;
  }
  if (!GlobalBackendRegistry().Register(std::make_unique<BareAddBackend>()).ok()) return 1;
  for (const char* backend : {"native", "bench_bare_add"}) {
    if (Measure(*graph, backend, runs, batches) != 0) return 1;
  }
  return 0;
}

int Measure(const Graph& graph, const std::string& backend, int runs, int batches) {
  // Every node its own step; the Add takes the constant as a kernel-held input.
  const std::string rule = backend == "native" ? "op" : "add";
  Placement placement;
  for (NodeId n = 0; n < graph.num_nodes(); ++n) {
    placement.groups.emplace_back(backend, Candidate{rule, SubGraph(graph.num_nodes(), {n})});
  }
  auto exe = Executable::Create(graph, placement, GlobalBackendRegistry(), 1);
  if (!exe.ok()) {
    std::fprintf(stderr, "%s\n", exe.status().ToString().c_str());
    return 1;
  }
  std::vector<Tensor> inputs = {Tensor::FromVector<float>({16}, std::vector<float>(16, 1.0f))};
  for (int r = 0; r < 20; ++r) (void)(*exe)->Run(inputs);  // warm-up
  std::vector<double> ns_per_step;
  for (int batch = 0; batch < batches; ++batch) {
    const auto start = std::chrono::steady_clock::now();
    for (int r = 0; r < runs; ++r) {
      auto out = (*exe)->Run(inputs);
      if (!out.ok()) {
        std::fprintf(stderr, "%s\n", out.status().ToString().c_str());
        return 1;
      }
    }
    const std::chrono::duration<double, std::nano> elapsed =
        std::chrono::steady_clock::now() - start;
    ns_per_step.push_back(elapsed.count() / runs / (*exe)->num_steps());
  }
  std::sort(ns_per_step.begin(), ns_per_step.end());
  std::printf(
      "%d steps of Add on 16 floats (%s), %d runs per batch: %.0f ns per step "
      "(median of %d batches; min %.0f, max %.0f)\n",
      (*exe)->num_steps(), backend.c_str(), runs, ns_per_step[ns_per_step.size() / 2], batches,
      ns_per_step.front(), ns_per_step.back());
  return 0;
}

}  // namespace
}  // namespace collage

int main(int argc, char** argv) { return collage::Main(argc, argv); }
