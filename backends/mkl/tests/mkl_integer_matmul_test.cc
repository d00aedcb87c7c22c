// MKL's MatMulInteger (cblas_gemm_s8u8s32): equal to the reference kernels' exact int32 sums
// for uint8 activations with a run-time or constant zero point (0 to 255) by int8 weights,
// batched and not, at 1 and 2 threads; not offered for what it cannot compute exactly (uint8
// weights, a per-row zero point, weights with a zero point, weights beyond 7 bits on a CPU
// without VNNI).
#include <random>
#include <string>
#include <vector>

#include "backend_test_util.h"
#include "collage/available_backends.h"

namespace collage::testing {
namespace {

bool HasVnni() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512vnni") != 0;
}

struct IntegerCase {
  Shape a;
  int64_t n;
  int weight_max;           // weights drawn from [-weight_max, weight_max]
  bool zero_point_input;    // A's zero point an input (as DynamicQuantizeLinear's is), else a constant
  bool weight_zero_point;   // a zero point of zeros for the weights
};

Graph IntegerMatMulGraph(const IntegerCase& c, DType weight_type = DType::kInt8,
                         const Shape& a_zero_point_shape = {}) {
  std::mt19937 rng(5);
  const int64_t k = c.a.back();
  GraphBuilder b("matmul_integer");
  const ValueId a = b.Input("a", DType::kUInt8, c.a);
  ValueId w;
  if (weight_type == DType::kInt8) {
    std::uniform_int_distribution<int> weight(-c.weight_max, c.weight_max);
    std::vector<int8_t> values(static_cast<size_t>(k * c.n));
    for (int8_t& v : values) v = static_cast<int8_t>(weight(rng));
    w = b.Constant<int8_t>("w", Shape{k, c.n}, values);
  } else {
    w = b.Constant<uint8_t>("w", Shape{k, c.n}, std::vector<uint8_t>(static_cast<size_t>(k * c.n), 7));
  }
  const ValueId za = c.zero_point_input
                         ? b.Input("a_zero_point", DType::kUInt8, a_zero_point_shape)
                         : b.Scalar<uint8_t>("a_zero_point", 201);
  std::vector<ValueId> in{a, w, za};
  if (c.weight_zero_point) in.push_back(b.Scalar<int8_t>("w_zero_point", 0));
  b.Output(b.Node("MatMulInteger", in));
  return BuildOrFail(std::move(b));
}

// The rule's one candidate on `graph`, compiled for `threads` threads and run on uint8
// activations over 0..255 with A's zero point `zero_point` (where it is an input): equal to
// the reference kernels' sums.
void ExpectExact(const Graph& graph, int threads, uint8_t zero_point) {
  const std::vector<Candidate> candidates = CandidatesOf(graph, "mkl", "matmul_integer");
  ASSERT_EQ(candidates.size(), 1u);
  const CompileRequest request =
      CompileRequest::For(graph, candidates[0].nodes, "matmul_integer", threads);
  auto kernel = BackendNamed("mkl").Compile(request);
  ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
  std::mt19937 rng(11);
  std::vector<Tensor> inputs;
  for (ValueId v : request.inputs) {
    Tensor t(DType::kUInt8, request.type(v).shape);
    auto* p = t.data_as<uint8_t>();
    for (int64_t i = 0; i < t.num_elements(); ++i) p[i] = static_cast<uint8_t>(rng());
    if (request.type(v).shape.size() <= 1 && t.num_elements() == 1) p[0] = zero_point;
    inputs.push_back(std::move(t));
  }
  auto got = RunKernel(**kernel, request, inputs);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  auto want = RunReferenceGroup(request, inputs);
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  ExpectClose(*got, *want, 0.0, DescribeGroup("mkl", request));
}

class MklIntegerMatMul : public ::testing::Test {
 protected:
  void SetUp() override {
    if (GlobalBackendRegistry().Find("mkl") == nullptr) GTEST_SKIP() << "mkl is not built";
  }
};

TEST_F(MklIntegerMatMul, EqualsTheExactSums) {
  const int full = HasVnni() ? 127 : 64;  // full-range weights only where MKL sums them exactly
  const std::vector<IntegerCase> cases = {{{8, 64}, 24, full, true, false},
                                          {{2, 3, 256}, 16, full, true, true},
                                          {{1, 128, 768}, 64, 64, true, true},
                                          {{5, 33}, 7, full, false, false},
                                          {{33}, 9, 64, true, false}};
  for (const IntegerCase& c : cases) {
    SCOPED_TRACE(ShapeToString(c.a));
    for (int threads : {1, 2}) {
      for (uint8_t zero_point : {0, 128, 255}) ExpectExact(IntegerMatMulGraph(c), threads, zero_point);
    }
  }
}

TEST_F(MklIntegerMatMul, NotOfferedWhereItIsNotExact) {
  const IntegerCase plain{{4, 32}, 8, 64, true, false};
  EXPECT_TRUE(RuleOffers(IntegerMatMulGraph(plain), "mkl", "matmul_integer"));
  EXPECT_FALSE(RuleOffers(IntegerMatMulGraph(plain, DType::kUInt8), "mkl", "matmul_integer"));
  EXPECT_FALSE(RuleOffers(IntegerMatMulGraph(plain, DType::kInt8, Shape{4}), "mkl", "matmul_integer"));
  GraphBuilder b("weight_zero_point");
  const ValueId a = b.Input("a", DType::kUInt8, {4, 32});
  const ValueId w = b.Constant<int8_t>("w", Shape{32, 8}, std::vector<int8_t>(256, 3));
  b.Output(b.Node("MatMulInteger", {a, w, b.Scalar<uint8_t>("za", 3), b.Scalar<int8_t>("zw", 1)}));
  EXPECT_FALSE(RuleOffers(BuildOrFail(std::move(b)), "mkl", "matmul_integer"));
  const IntegerCase full_range{{4, 32}, 8, 127, true, false};
  EXPECT_EQ(RuleOffers(IntegerMatMulGraph(full_range), "mkl", "matmul_integer"), HasVnni());
}

}  // namespace
}  // namespace collage::testing
