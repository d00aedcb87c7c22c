// Shared by the backend tests: take the candidates a backend's rules offer on a small graph,
// compile each through a KernelRunner (which converts plain ↔ the kernel's layouts), run it
// on random inputs and compare with the reference kernels run node by node
// (RunReferenceGroup), by the normalized error (util/normalized_error.h).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "collage/available_backends.h"
#include "collage/normalized_error.h"
#include "collage/random_tensor.h"
#include "collage/sdk/backend.h"
#include "collage/sdk/rule.h"
#include "ops/graph_builder.h"
#include "runtime/kernel_runner.h"

namespace collage::testing {

// The registered backend called `name`.
inline const Backend& BackendNamed(const std::string& name) {
  const Backend* backend = GlobalBackendRegistry().Find(name);
  EXPECT_NE(backend, nullptr) << name;
  return *backend;
}

inline Graph BuildOrFail(GraphBuilder&& builder) {
  StatusOr<Graph> graph = std::move(builder).Build();
  EXPECT_TRUE(graph.ok()) << graph.status().ToString();
  return graph.ok() ? std::move(*graph) : Graph();
}

// Random inputs of the request's input types (util/random_tensor.h: floats N(0,1), integers
// in [0,16)); with `positive`, float32 inputs become |N(0,1)| + 0.1 (Sqrt, Log, Div).
inline std::vector<Tensor> RandomInputs(const CompileRequest& request, uint32_t seed,
                                        bool positive = false) {
  std::mt19937 rng(seed);
  std::vector<Tensor> inputs;
  for (ValueId v : request.inputs) {
    Tensor t = RandomTensor(request.type(v).dtype, request.type(v).shape, rng);
    if (positive && t.dtype() == DType::kFloat32) {
      float* p = t.data_as<float>();
      for (int64_t i = 0; i < t.num_elements(); ++i) p[i] = std::abs(p[i]) + 0.1f;
    }
    inputs.push_back(std::move(t));
  }
  return inputs;
}

inline void ExpectClose(const std::vector<Tensor>& got, const std::vector<Tensor>& ref,
                        double tolerance, const std::string& what) {
  ASSERT_EQ(got.size(), ref.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    std::string problem;
    EXPECT_LE(NormalizedError(got[i], ref[i], &problem), tolerance)
        << what << ", output " << i << " " << DTypeName(ref[i].dtype()) << " "
        << ShapeToString(ref[i].shape()) << " " << problem;
  }
}

// The candidates `rule` of `backend` offers on `graph`.
inline std::vector<Candidate> CandidatesOf(const Graph& graph, const std::string& backend,
                                           const std::string& rule) {
  std::vector<Candidate> out;
  for (Candidate& c : EnumerateCandidates(graph, BackendNamed(backend).rules())) {
    if (c.rule == rule) out.push_back(std::move(c));
  }
  return out;
}

inline bool RuleOffers(const Graph& graph, const std::string& backend, const std::string& rule) {
  return !CandidatesOf(graph, backend, rule).empty();
}

// Compiles `request` on `backend` through a KernelRunner, runs it on random inputs from
// `seed` and compares with the reference. 1e-4 is the default tolerance: float32 rounding of
// short sums, and transcendental functions computed by different approximations.
inline void ExpectMatchesReference(const std::string& backend, const CompileRequest& request,
                                   double tolerance = 1e-4, uint32_t seed = 7,
                                   bool positive = false) {
  const std::string what = DescribeGroup(backend, request);
  auto runner = KernelRunner::Create(BackendNamed(backend), request, GlobalBackendRegistry());
  ASSERT_TRUE(runner.ok()) << what << ": " << runner.status().ToString();
  const std::vector<Tensor> inputs = RandomInputs(request, seed, positive);
  auto got = (*runner)->Run(inputs);
  ASSERT_TRUE(got.ok()) << what << ": " << got.status().ToString();
  auto ref = RunReferenceGroup(request, inputs);
  ASSERT_TRUE(ref.ok()) << what << ": " << ref.status().ToString();
  ExpectClose(*got, *ref, tolerance, what);
}

// ExpectMatchesReference for one candidate, compiled for `threads` threads.
inline void ExpectCandidateMatches(const Graph& graph, const std::string& backend,
                                   const Candidate& candidate, double tolerance = 1e-4,
                                   uint32_t seed = 7, int threads = 1) {
  ExpectMatchesReference(backend,
                         CompileRequest::For(graph, candidate.nodes, candidate.rule, threads),
                         tolerance, seed);
}

// For ExpectRuleMatches: candidates of any number of nodes count.
inline constexpr int kAnyNodes = -1;

// `rule` offers exactly one candidate of `num_nodes` nodes (of any size with kAnyNodes) on
// `graph`, and it matches the reference.
inline void ExpectRuleMatches(const Graph& graph, const std::string& backend,
                              const std::string& rule, int num_nodes, double tolerance = 1e-4,
                              uint32_t seed = 7, int threads = 1) {
  std::vector<Candidate> candidates = CandidatesOf(graph, backend, rule);
  int found = 0;
  for (const Candidate& c : candidates) {
    if (num_nodes != kAnyNodes && c.nodes.size() != num_nodes) continue;
    ++found;
    ExpectCandidateMatches(graph, backend, c, tolerance, seed, threads);
  }
  EXPECT_EQ(found, 1) << "rule '" << rule << "' offered " << candidates.size() << " candidates, "
                      << found << " of " << num_nodes << " nodes";
}

// Runs every candidate `backend` offers on `graph` against the reference (1 thread, inputs
// from seed 7, positive ones with `positive`); returns the rule names offered.
inline std::set<std::string> CheckAllCandidates(const Graph& graph, const std::string& backend,
                                                double tolerance = 1e-4, bool positive = false) {
  std::set<std::string> offered;
  for (const Candidate& c : EnumerateCandidates(graph, BackendNamed(backend).rules())) {
    offered.insert(c.rule);
    ExpectMatchesReference(backend, CompileRequest::For(graph, c.nodes, c.rule, 1), tolerance, 7,
                           positive);
  }
  return offered;
}

// Every offer of `backend` on `graph` in a reduced `precision`, compiled in it for each of
// `threads` and compared with the reference within that precision's group bound
// (GroupErrorBound; ExpectMatchesReference fails on a compile error); the rules offered.
inline std::set<std::string> CheckCandidatesIn(Precision precision, const Graph& graph,
                                               const std::string& backend,
                                               const std::vector<int>& threads = {1}) {
  std::set<std::string> offered;
  for (const Candidate& c :
       EnumerateCandidates(graph, BackendNamed(backend).rules(), false, {precision})) {
    offered.insert(c.rule);
    for (int t : threads) {
      CompileRequest request = CompileRequest::For(graph, c.nodes, c.rule, t);
      request.precision = precision;
      ExpectMatchesReference(backend, request, GroupErrorBound(precision));
    }
  }
  return offered;
}

inline bool Offers(const std::set<std::string>& offered, const std::string& rule) {
  return offered.count(rule) != 0;
}

// Gemm of A [6, 9] (or [9, 6] with transA) by a constant B [9, 5] (or [5, 9]) with one form
// of C: a case of GemmCases.
struct GemmCase {
  int trans_a, trans_b;
  float alpha, beta;
  Shape c;  // {0}: no C
  bool c_constant;

  std::string ToString() const {
    return "transA " + std::to_string(trans_a) + " transB " + std::to_string(trans_b) +
           " alpha " + std::to_string(alpha) + " beta " + std::to_string(beta) + " C " +
           ShapeToString(c);
  }
};

// The transpose flags, alpha and beta, and C in every form ONNX Gemm broadcasts.
inline const std::vector<GemmCase>& GemmCases() {
  static const std::vector<GemmCase> cases = {
      {0, 0, 1.0f, 1.0f, {6, 5}, true},
      {1, 0, 0.5f, 2.0f, {5}, true},     // C a row
      {0, 1, 1.0f, 1.0f, {6, 1}, true},  // C a column
      {1, 1, -1.5f, 0.25f, {}, true},    // C a scalar
      {0, 1, 1.0f, 1.0f, {1, 1}, false},  // C an input
      {0, 0, 2.0f, 1.0f, {6, 5}, false},
      {0, 0, 1.0f, 0.0f, {6, 5}, true},  // beta 0 ignores C
      {1, 0, 1.0f, 1.0f, {0}, false},    // no C (opset >= 11)
  };
  return cases;
}

// x [2, 7, 13] · constant w [13, 5], then Add of a constant of shape `bias` (a Linear layer
// when `bias` is a row): for the matmul_bias rules.
inline Graph MatMulAddGraph(const Shape& bias) {
  GraphBuilder b("linear");
  ValueId x = b.Input("x", DType::kFloat32, {2, 7, 13});
  ValueId y = b.Node("MatMul", {x, b.RandomNormal("w", {13, 5}, 1.0f)});
  b.Output(b.Node("Add", {y, b.RandomNormal("bias", bias, 1.0f)}));
  return BuildOrFail(std::move(b));
}

// A 2-D Conv (optionally without bias, optionally followed by Relu), for the im2col
// convolutions of the BLAS backends.
struct Conv2dCase {
  const char* name;
  Shape x;
  Shape w;
  NamedAttributes attrs;
  bool bias = true;
};

inline Graph Conv2dGraph(const Conv2dCase& c, bool relu) {
  GraphBuilder b("conv");
  ValueId x = b.Input("x", DType::kFloat32, c.x);
  std::vector<ValueId> inputs = {x, b.RandomNormal("w", c.w, 0.3f)};
  if (c.bias) inputs.push_back(b.RandomNormal("b", {c.w[0]}, 1.0f));
  ValueId y = b.Node("Conv", inputs, c.attrs);
  if (relu) y = b.Node("Relu", {y});
  b.Output(y);
  return BuildOrFail(std::move(b));
}

inline Graph GemmGraph(const GemmCase& c) {
  GraphBuilder b("gemm");
  const int64_t m = 6, n = 5, k = 9;
  ValueId a = b.Input("a", DType::kFloat32, c.trans_a ? Shape{k, m} : Shape{m, k});
  ValueId w = b.RandomNormal("b", c.trans_b ? Shape{n, k} : Shape{k, n}, 1.0f);
  std::vector<ValueId> inputs = {a, w};
  if (c.c != Shape{0}) {
    inputs.push_back(c.c_constant ? b.RandomNormal("c", c.c, 1.0f)
                                  : b.Input("c", DType::kFloat32, c.c));
  }
  b.Output(b.Node("Gemm", inputs,
                  {{"transA", c.trans_a}, {"transB", c.trans_b}, {"alpha", c.alpha},
                   {"beta", c.beta}}));
  return BuildOrFail(std::move(b));
}

// Runs a compiled kernel directly on plain buffers (for kernels that declare plain layouts),
// with its workspace.
inline StatusOr<std::vector<Tensor>> RunKernel(const Kernel& kernel, const CompileRequest& request,
                                               const std::vector<Tensor>& inputs) {
  std::vector<const void*> in;
  for (const Tensor& t : inputs) in.push_back(t.data());
  std::vector<Tensor> outputs;
  std::vector<void*> out;
  for (ValueId v : request.outputs) {
    outputs.emplace_back(request.type(v).dtype, request.type(v).shape);
    out.push_back(outputs.back().data());
  }
  std::unique_ptr<void, void (*)(void*)> workspace(
      kernel.workspace_bytes() ? std::aligned_alloc(64, (kernel.workspace_bytes() + 63) / 64 * 64)
                               : nullptr,
      std::free);
  COLLAGE_RETURN_IF_ERROR(kernel.Run({in, out, workspace.get()}));
  return outputs;
}

// Runs `kernel` from `threads` threads at once, `runs` times each with fresh output buffers,
// thread t on inputs from seed `seed + t`. Per thread: the worst normalized error of output 0
// against the reference kernels, or -1 when a run (or the reference) failed.
inline std::vector<double> WorstErrorsOfConcurrentRuns(const Kernel& kernel,
                                                       const CompileRequest& request, int threads,
                                                       int runs, uint32_t seed) {
  std::vector<double> errors(static_cast<size_t>(threads), -1);
  auto work = [&](int t) {
    const std::vector<Tensor> inputs = RandomInputs(request, seed + static_cast<uint32_t>(t));
    auto ref = RunReferenceGroup(request, inputs);
    if (!ref.ok()) return;
    double worst = 0;
    for (int run = 0; run < runs; ++run) {
      auto got = RunKernel(kernel, request, inputs);
      if (!got.ok()) return;
      worst = std::max(worst, NormalizedError((*got)[0], (*ref)[0]));
    }
    errors[static_cast<size_t>(t)] = worst;
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(work, t);
  for (std::thread& th : pool) th.join();
  return errors;
}

}  // namespace collage::testing
