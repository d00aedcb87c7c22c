// Shared by the XNNPACK backend tests: build a small graph, take the candidates one rule
// offers, compile each through a KernelRunner (which converts plain ↔ channels-last) and
// compare with the reference kernels (RunReferenceGroup).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "collage/backend.h"
#include "ir/graph_builder.h"
#include "pattern/rule.h"
#include "runtime/kernel_runner.h"
#include "util/random_tensor.h"

namespace collage::xnnpack_testing {

inline const Backend& XnnBackend(const std::string& name) {
  const Backend* backend = BackendRegistry::Global().Find(name);
  EXPECT_NE(backend, nullptr) << name;
  return *backend;
}

// max|a-b| / max(1, max|ref|); NaN must sit at the same places.
inline double NormalizedError(const Tensor& got, const Tensor& ref) {
  if (got.dtype() != ref.dtype() || got.shape() != ref.shape()) return INFINITY;
  const std::vector<double> a = got.ToVector<double>(), b = ref.ToVector<double>();
  double diff = 0, scale = 1;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) || std::isnan(b[i])) {
      if (std::isnan(a[i]) != std::isnan(b[i])) return INFINITY;
      continue;
    }
    diff = std::max(diff, std::abs(a[i] - b[i]));
    scale = std::max(scale, std::abs(b[i]));
  }
  return diff / scale;
}

inline std::vector<Tensor> RandomInputs(const CompileRequest& request, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<Tensor> inputs;
  for (ValueId v : request.inputs) {
    inputs.push_back(RandomTensor(request.type(v).dtype, request.type(v).shape, rng));
  }
  return inputs;
}

inline std::vector<Candidate> CandidatesOf(const Graph& graph, const std::string& backend,
                                           const std::string& rule) {
  std::vector<Candidate> out;
  for (Candidate& c : EnumerateCandidates(graph, XnnBackend(backend).rules())) {
    if (c.rule == rule) out.push_back(std::move(c));
  }
  return out;
}

// Compiles one candidate and compares it with the reference on random inputs.
inline void ExpectCandidateMatches(const Graph& graph, const std::string& backend,
                                   const Candidate& candidate, double tolerance = 1e-4,
                                   uint32_t seed = 7) {
  CompileRequest request = CompileRequest::For(graph, candidate.nodes, candidate.rule, 1);
  const std::string what = DescribeGroup(backend, request);
  auto runner = KernelRunner::Create(XnnBackend(backend), request, BackendRegistry::Global());
  ASSERT_TRUE(runner.ok()) << runner.status().ToString();
  const std::vector<Tensor> inputs = RandomInputs(request, seed);
  auto got = (*runner)->Run(inputs);
  ASSERT_TRUE(got.ok()) << what << ": " << got.status().ToString();
  auto ref = RunReferenceGroup(request, inputs);
  ASSERT_TRUE(ref.ok()) << what << ": " << ref.status().ToString();
  ASSERT_EQ(got->size(), ref->size()) << what;
  for (size_t i = 0; i < got->size(); ++i) {
    EXPECT_LE(NormalizedError((*got)[i], (*ref)[i]), tolerance) << what << ", output " << i;
  }
}

// `rule` offers exactly one candidate of `num_nodes` nodes in the graph, and it matches the
// reference.
inline void ExpectRuleMatches(const Graph& graph, const std::string& backend,
                              const std::string& rule, int num_nodes, double tolerance = 1e-4) {
  std::vector<Candidate> candidates = CandidatesOf(graph, backend, rule);
  int found = 0;
  for (const Candidate& c : candidates) {
    if (c.nodes.size() != num_nodes) continue;
    ++found;
    ExpectCandidateMatches(graph, backend, c, tolerance);
  }
  EXPECT_EQ(found, 1) << "rule '" << rule << "' offered " << candidates.size() << " candidates, "
                      << found << " of " << num_nodes << " nodes";
}

inline bool RuleOffers(const Graph& graph, const std::string& backend, const std::string& rule) {
  return !CandidatesOf(graph, backend, rule).empty();
}

inline Graph BuildOrDie(GraphBuilder&& builder) {
  StatusOr<Graph> graph = std::move(builder).Build();
  EXPECT_TRUE(graph.ok()) << graph.status().ToString();
  return graph.ok() ? std::move(*graph) : Graph();
}

}  // namespace collage::xnnpack_testing
