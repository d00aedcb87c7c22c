// Shared by the oneDNN backend tests: every candidate the backend offers on a small graph is
// compiled, run through KernelRunner (which converts plain ↔ the kernel's layouts) on random
// inputs and compared with the reference kernels (RunReferenceGroup).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "collage/backend.h"
#include "ir/graph_builder.h"
#include "pattern/rule.h"
#include "runtime/kernel_runner.h"
#include "util/random_tensor.h"

namespace collage::testing {

inline const Backend& Onednn() {
  const Backend* backend = BackendRegistry::Global().Find("onednn");
  EXPECT_NE(backend, nullptr);
  return *backend;
}

// max|a-b| / max(1, max|ref|); NaN must be NaN in both.
inline double OnednnError(const Tensor& got, const Tensor& ref) {
  if (got.dtype() != ref.dtype() || got.shape() != ref.shape()) return INFINITY;
  const std::vector<double> a = got.ToVector<double>();
  const std::vector<double> b = ref.ToVector<double>();
  double max_diff = 0, max_ref = 1;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) || std::isnan(b[i])) {
      if (std::isnan(a[i]) != std::isnan(b[i])) return INFINITY;
      continue;
    }
    max_diff = std::max(max_diff, std::abs(a[i] - b[i]));
    max_ref = std::max(max_ref, std::abs(b[i]));
  }
  return max_diff / max_ref;
}

// Runs every oneDNN candidate of `graph` against the reference; returns the rule names
// offered. Inputs are N(0,1), or |N(0,1)| + 0.1 when `positive` (Sqrt, Log, Div).
inline std::set<std::string> CheckAllCandidates(const Graph& graph, double tolerance = 1e-4,
                                                bool positive = false) {
  std::set<std::string> offered;
  const Backend& backend = Onednn();
  for (const Candidate& c : EnumerateCandidates(graph, backend.rules())) {
    offered.insert(c.rule);
    CompileRequest request = CompileRequest::For(graph, c.nodes, c.rule, 1);
    auto runner = KernelRunner::Create(backend, request, BackendRegistry::Global());
    EXPECT_TRUE(runner.ok()) << c.rule << ": " << runner.status().ToString();
    if (!runner.ok()) continue;
    std::mt19937 rng(7);
    std::vector<Tensor> inputs;
    for (ValueId in : request.inputs) {
      Tensor t = RandomTensor(request.type(in).dtype, request.type(in).shape, rng);
      if (positive && t.dtype() == DType::kFloat32) {
        for (int64_t i = 0; i < t.num_elements(); ++i) t.data_as<float>()[i] = std::abs(t.data_as<float>()[i]) + 0.1f;
      }
      inputs.push_back(t);
    }
    auto got = (*runner)->Run(inputs);
    EXPECT_TRUE(got.ok()) << c.rule << ": " << got.status().ToString();
    auto ref = RunReferenceGroup(request, inputs);
    EXPECT_TRUE(ref.ok()) << c.rule << ": " << ref.status().ToString();
    if (!got.ok() || !ref.ok()) continue;
    EXPECT_EQ(got->size(), ref->size());
    for (size_t i = 0; i < std::min(got->size(), ref->size()); ++i) {
      EXPECT_LE(OnednnError((*got)[i], (*ref)[i]), tolerance)
          << DescribeGroup("onednn", request) << " output " << i;
    }
  }
  return offered;
}

inline Graph BuildOrFail(GraphBuilder&& b) {
  auto g = std::move(b).Build();
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  return g.ok() ? std::move(*g) : Graph();
}

inline bool Offers(const std::set<std::string>& offered, const std::string& rule) {
  return offered.count(rule) != 0;
}

}  // namespace collage::testing
