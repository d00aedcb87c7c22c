#include "integer_matmul_kernel.h"

#include <mkl_cblas.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "backend/shared/find_node.h"
#include "backend/shared/matmul_plan.h"
#include "backend/shared/quantized_params.h"
#include "collage/sdk/errors.h"
#include "mkl_threads.h"
#include "packed_matrix.h"

namespace collage::mkl {
namespace {

bool MultipliesBytesExactly() {
  static const bool vnni = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512vnni") != 0;
  }();
  return vnni;
}

class IntegerMatMulKernel final : public Kernel {
 public:
  // A's zero point: the kernel input `zero_point_input` holds it, or (-1) it is
  // `fixed_zero_point`.
  IntegerMatMulKernel(MatMulPlan plan, std::vector<int8_t> weights, std::vector<int32_t> column_sums,
                      int a_input, int zero_point_input, int32_t fixed_zero_point, int num_threads,
                      size_t num_inputs)
      : plan_(std::move(plan)),
        weights_(std::move(weights)),
        column_sums_(std::move(column_sums)),
        a_input_(a_input),
        zero_point_input_(zero_point_input),
        fixed_zero_point_(fixed_zero_point),
        num_threads_(num_threads) {
    input_layouts_.assign(num_inputs, Layout::Plain());
    output_layouts_.assign(1, Layout::Plain());
    workspace_bytes_ = column_sums_.size() * sizeof(int32_t);
  }

  Status Run(const KernelBuffers& buffers) const override {
    auto* y = static_cast<int32_t*>(buffers.outputs[0]);
    const int64_t count = static_cast<int64_t>(plan_.a_offsets.size());
    const int64_t block = plan_.m * plan_.n;
    if (block == 0) return Status::Ok();
    const int32_t zero_point =
        zero_point_input_ < 0
            ? fixed_zero_point_
            : *static_cast<const uint8_t*>(buffers.inputs[static_cast<size_t>(zero_point_input_)]);
    if (plan_.k == 0) {  // an empty sum: MKL would reject lda = 0
      std::fill(y, y + count * block, 0);
      return Status::Ok();
    }
    // The row of offsets: -zero_point x each weight column's sum (exact: IntegerMatMulSupported
    // bounds it).
    auto* offsets = static_cast<int32_t*>(buffers.workspace);
    for (size_t j = 0; j < column_sums_.size(); ++j) offsets[j] = -zero_point * column_sums_[j];
    const auto* a = static_cast<const uint8_t*>(buffers.inputs[static_cast<size_t>(a_input_)]);
    const auto m = static_cast<MKL_INT>(plan_.m);
    const auto n = static_cast<MKL_INT>(plan_.n);
    const auto k = static_cast<MKL_INT>(plan_.k);
    MklThreadScope threads(num_threads_);
    for (int64_t i = 0; i < count; ++i) {
      cblas_gemm_s8u8s32(CblasRowMajor, CblasNoTrans, CblasNoTrans, CblasRowOffset, m, n, k, 1.0f,
                         a + plan_.a_offsets[static_cast<size_t>(i)], k, 0,
                         weights_.data() + plan_.b_offsets[static_cast<size_t>(i)], n, 0, 0.0f,
                         y + i * block, n, offsets);
    }
    return Status::Ok();
  }

 private:
  MatMulPlan plan_;
  std::vector<int8_t> weights_;
  std::vector<int32_t> column_sums_;
  int a_input_, zero_point_input_;
  int32_t fixed_zero_point_;
  int num_threads_;
};

}  // namespace

bool IntegerMatMulSupported(const Match& match) {
  const Graph& graph = *match.graph;
  const Node& node = graph.node(match.op_nodes[0]);
  const auto input = [&](size_t i) -> const Value* {
    return i < node.inputs.size() && node.inputs[i] != kNoValue ? &graph.value(node.inputs[i])
                                                                 : nullptr;
  };
  const Value* a = input(0);
  const Value* b = input(1);
  if (a == nullptr || b == nullptr || a->type.dtype != DType::kUInt8 || !a->type.is_static() ||
      !b->is_constant() || b->type.dtype != DType::kInt8 || b->type.shape.size() != 2 ||
      a->type.shape.empty()) {
    return false;
  }
  if (const Value* za = input(2);
      za != nullptr && (za->type.dtype != DType::kUInt8 || NumElements(za->type.shape) != 1)) {
    return false;
  }
  if (!AllZero(graph, node.inputs.size() > 3 ? node.inputs[3] : kNoValue)) return false;
  // |sum_k (a - z) w| <= 255 x 128 x K must fit int32, as must the offsets.
  const int64_t k = b->type.shape[0];
  if (k > std::numeric_limits<int32_t>::max() / (255 * 128)) return false;
  return MultipliesBytesExactly() || FitsSevenBits(*b->constant);
}

StatusOr<std::unique_ptr<Kernel>> CompileIntegerMatMul(const CompileRequest& request) {
  const Graph& graph = *request.graph;
  const Node* node = FindNode(request, "MatMulInteger");
  if (node == nullptr) return InvalidArgument("the group has no MatMulInteger node");
  const Value& a = graph.value(node->inputs[0]);
  const Value& b = graph.value(node->inputs[1]);
  if (!b.is_constant()) return InvalidArgument("MatMulInteger's weights are not a constant");
  COLLAGE_ASSIGN_OR_RETURN(MatMulPlan plan, PlanMatMul(a.type.shape, b.type.shape));
  if (!FitsMklInt(plan.m) || !FitsMklInt(plan.n) || !FitsMklInt(plan.k)) {
    return Unsupported("MatMulInteger {} x {} exceeds MKL's int dims", ShapeToString(a.type.shape),
                       ShapeToString(b.type.shape));
  }
  const int a_input = request.input_index(node->inputs[0]);
  if (a_input < 0) return InvalidArgument("MatMulInteger's A is not an input of the group");
  int zero_point_input = -1;
  int32_t fixed_zero_point = 0;
  if (node->inputs.size() > 2 && node->inputs[2] != kNoValue) {
    const Value& za = graph.value(node->inputs[2]);
    if (za.is_constant()) {
      fixed_zero_point = *za.constant->data_as<uint8_t>();
    } else {
      zero_point_input = request.input_index(node->inputs[2]);
      if (zero_point_input < 0) return InvalidArgument("A's zero point is not an input of the group");
    }
  }
  const int8_t* w = b.constant->data_as<int8_t>();
  std::vector<int8_t> weights(w, w + b.constant->num_elements());
  std::vector<int32_t> column_sums(static_cast<size_t>(plan.n), 0);
  for (int64_t row = 0; row < plan.k; ++row) {
    for (int64_t j = 0; j < plan.n; ++j) column_sums[static_cast<size_t>(j)] += w[row * plan.n + j];
  }
  return std::unique_ptr<Kernel>(std::make_unique<IntegerMatMulKernel>(
      std::move(plan), std::move(weights), std::move(column_sums), a_input, zero_point_input,
      fixed_zero_point, request.num_threads(), request.inputs.size()));
}

}  // namespace collage::mkl
