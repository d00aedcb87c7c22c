#include "special_inputs.h"

#include <cmath>
#include <limits>

namespace collage::backend_ops {
namespace {

// True when `value` is read by some node of the group as a parameter rather than as data.
bool ReadAsParameter(const CompileRequest& request, ValueId value) {
  const Graph& graph = *request.graph;
  for (NodeId consumer : graph.value(value).consumers) {
    if (!request.nodes.Contains(consumer)) continue;
    const Node& node = graph.node(consumer);
    if (node.op_type == "Range") return true;
    for (size_t i = 1; i < node.inputs.size(); ++i) {
      const bool parameter =
          node.op_type == "Resize" || node.op_type == "Upsample" || node.op_type == "Dropout";
      if (parameter && node.inputs[i] == value) return true;
    }
  }
  return false;
}

template <typename T>
void Poison(Tensor& t, SpecialKind kind, int salt) {
  T* p = t.data_as<T>();
  const int64_t n = t.num_elements();
  if (n == 0) return;
  const int64_t row = t.rank() == 0 || t.shape().back() == 0 ? 1 : t.shape().back();
  const int64_t rows = n / row;
  // Spread over the tensor (start, a third, two thirds), shifted per input so that two
  // inputs of one Add do not hold their specials at the same place.
  auto scattered = [&](int k) { return (k * (n / 3) + k + salt * 5) % n; };
  auto fill_row = [&](T v) {
    const int64_t r = (rows / 2 + salt) % rows;
    for (int64_t i = 0; i < row; ++i) p[r * row + i] = v;
  };
  constexpr T kInf = std::numeric_limits<T>::infinity();
  switch (kind) {
    case SpecialKind::kNan:
      for (int k = 0; k < 3; ++k) p[scattered(k)] = std::numeric_limits<T>::quiet_NaN();
      break;
    case SpecialKind::kNanRow: fill_row(std::numeric_limits<T>::quiet_NaN()); break;
    case SpecialKind::kInf:
      for (int k = 0; k < 4; ++k) p[scattered(k)] = k % 2 == 0 ? kInf : -kInf;
      break;
    case SpecialKind::kInfRow: fill_row(-kInf); break;
    case SpecialKind::kSubnormal: {
      // Scaled by 2^(min_exponent - 5) (2^-130 for float), N(0, 1) values under 8 stay
      // below the smallest normal, 2^(min_exponent - 1); signs and ratios are kept, so
      // inputs made positive for Sqrt and Log stay so.
      const int shift = std::numeric_limits<T>::min_exponent - 5;
      for (int64_t i = 0; i < n; ++i) p[i] = std::ldexp(p[i], shift);
      break;
    }
  }
}

}  // namespace

const char* SpecialKindName(SpecialKind kind) {
  switch (kind) {
    case SpecialKind::kNan: return "nan";
    case SpecialKind::kNanRow: return "nan-row";
    case SpecialKind::kInf: return "inf";
    case SpecialKind::kInfRow: return "inf-row";
    case SpecialKind::kSubnormal: return "subnormal";
  }
  return "?";
}

std::vector<Tensor> WithSpecialValues(const CompileRequest& request,
                                      const std::vector<Tensor>& inputs, SpecialKind kind,
                                      int* poisoned) {
  std::vector<Tensor> out;
  *poisoned = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const DType dtype = inputs[i].dtype();
    const bool is_float = dtype == DType::kFloat32 || dtype == DType::kFloat64;
    if (!is_float || inputs[i].num_elements() == 0 || ReadAsParameter(request, request.inputs[i])) {
      out.push_back(inputs[i]);  // shared, never written
      continue;
    }
    Tensor t = inputs[i].Clone();
    const int salt = static_cast<int>(i);
    if (dtype == DType::kFloat32) Poison<float>(t, kind, salt);
    if (dtype == DType::kFloat64) Poison<double>(t, kind, salt);
    out.push_back(std::move(t));
    ++*poisoned;
  }
  return out;
}

}  // namespace collage::backend_ops
