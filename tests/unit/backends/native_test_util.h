// Shared by the native backend tests: run a compiled group on random inputs and compare it
// with the reference kernels run node by node (RunReferenceGroup).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "collage/backend.h"
#include "runtime/kernel_runner.h"
#include "util/random_tensor.h"

namespace collage::testing {

inline const Backend& Native() {
  const Backend* backend = BackendRegistry::Global().Find("native");
  EXPECT_NE(backend, nullptr);
  return *backend;
}

// Normalized error max|a-b| / max(1, max|ref|); NaN in both at the same place counts as
// equal, NaN in one only as infinite error.
inline double NormalizedError(const Tensor& got, const Tensor& ref) {
  if (got.dtype() != ref.dtype() || got.shape() != ref.shape()) return INFINITY;
  const std::vector<double> a = got.ToVector<double>();
  const std::vector<double> b = ref.ToVector<double>();
  double max_diff = 0, max_ref = 1;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) || std::isnan(b[i])) {
      if (std::isnan(a[i]) != std::isnan(b[i])) return INFINITY;
      continue;
    }
    if (std::isinf(a[i]) || std::isinf(b[i])) {
      if (a[i] != b[i]) return INFINITY;
      continue;
    }
    max_diff = std::max(max_diff, std::abs(a[i] - b[i]));
    max_ref = std::max(max_ref, std::abs(b[i]));
  }
  return max_diff / max_ref;
}

// Random inputs of the request's input types (floats N(0,1), integers in [0,16)).
inline std::vector<Tensor> RandomInputs(const CompileRequest& request, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<Tensor> inputs;
  for (ValueId in : request.inputs) {
    inputs.push_back(RandomTensor(request.type(in).dtype, request.type(in).shape, rng));
  }
  return inputs;
}

inline void ExpectClose(const std::vector<Tensor>& got, const std::vector<Tensor>& ref,
                        double tolerance, const std::string& what) {
  ASSERT_EQ(got.size(), ref.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_LE(NormalizedError(got[i], ref[i]), tolerance)
        << what << ", output " << i << " " << DTypeName(ref[i].dtype()) << " "
        << ShapeToString(ref[i].shape());
  }
}

// Compiles `request` on the native backend through a KernelRunner, runs it on `inputs` (or
// random ones) and compares with the reference. Tolerance 1e-4: both sides run the same
// reference kernels element by element, only the grouping of the work differs.
inline void ExpectMatchesReference(const CompileRequest& request, std::vector<Tensor> inputs = {},
                                   uint32_t seed = 1, double tolerance = 1e-4) {
  const std::string what = DescribeGroup("native", request);
  if (inputs.empty()) inputs = RandomInputs(request, seed);
  auto runner = KernelRunner::Create(Native(), request, BackendRegistry::Global());
  ASSERT_TRUE(runner.ok()) << runner.status().ToString();
  auto got = (*runner)->Run(inputs);
  ASSERT_TRUE(got.ok()) << what << ": " << got.status().ToString();
  auto ref = RunReferenceGroup(request, inputs);
  ASSERT_TRUE(ref.ok()) << what << ": " << ref.status().ToString();
  ExpectClose(*got, *ref, tolerance, what);
}

// Runs a compiled kernel directly on plain buffers (the native kernels declare plain
// layouts), with its workspace.
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

}  // namespace collage::testing
