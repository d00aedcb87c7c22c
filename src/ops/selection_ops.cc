// Ops whose output shape depends on the values of their inputs: NonZero (opsets 9, 13),
// Compress (9, 11), Unique (11) and NonMaxSuppression (10, 11).
//
// collage fixes every shape when a model loads, so type inference can only give these ops an
// output type when the inputs that decide it are constants (the importer then folds the node).
// Otherwise inference returns Unsupported; a session that compiles per run binds small graph
// inputs to their values and imports again. Each op computes a "plan" (what to select, hence
// the output shapes) in one function used by both inference and the kernel: the kernel
// recomputes the plan from its real inputs and checks it still gives the shapes its outputs
// were allocated with.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <numeric>
#include <optional>
#include <type_traits>
#include <vector>

#include "ops/data_movement.h"
#include "ops/op_helpers.h"

namespace collage {

// Declared in ops/op_families.h.
void RegisterSelectionOps(OpRegistry& registry);

namespace {

// ---- Shared ----

// The inputs of one node, seen the same way by type inference (types of every present input,
// values of the constant ones) and by the kernel (types and values of every present input).
class NodeInputs {
 public:
  explicit NodeInputs(const InferContext& ctx) : node_(ctx.node) {
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      types_.push_back(ctx.has_input(i) ? std::optional<TensorType>(ctx.input_type(i))
                                        : std::nullopt);
      values_.push_back(ctx.has_input(i) ? ctx.input_value(i) : nullptr);
    }
  }
  explicit NodeInputs(const KernelContext& ctx) : node_(ctx.node) {
    for (size_t i = 0; i < ctx.inputs.size(); ++i) {
      const Tensor& t = ctx.inputs[i];
      types_.push_back(t.empty() ? std::nullopt
                                 : std::optional<TensorType>(TensorType{t.dtype(), t.shape()}));
      values_.push_back(t.empty() ? nullptr : &t);
    }
  }

  const Node& node() const { return node_; }
  bool has(size_t i) const { return i < types_.size() && types_[i].has_value(); }
  // Requires has(i).
  const TensorType& type(size_t i) const { return *types_[i]; }

  // The data of input i (named `name` in errors), which decides the output shape. Unsupported
  // during type inference when the input is not a constant.
  StatusOr<const Tensor*> value(size_t i, const char* name) const {
    if (values_[i] == nullptr) {
      return OpError(node_, StatusCode::kUnsupported,
                     "its output shape depends on the values of input {} ('{}'), which are not "
                     "known when the model loads",
                     i, name);
    }
    return values_[i];
  }

 private:
  const Node& node_;
  std::vector<std::optional<TensorType>> types_;
  std::vector<const Tensor*> values_;
};

// Output i of a kernel must have the shape inference gave it, which the kernel's own plan
// recomputes: a difference means the inputs changed since the model loaded.
Status CheckAllocated(const KernelContext& ctx, size_t i, const Shape& computed) {
  const Shape& allocated = ctx.outputs[i].shape();
  if (allocated == computed) return Status::Ok();
  return OpError(ctx.node, StatusCode::kInternal,
                 "output {} was allocated with shape {} when the model loaded, but the inputs "
                 "now give shape {}",
                 i, ShapeToString(allocated), ShapeToString(computed));
}

// ---- NonZero ----

// The row-major flat positions of the non-zero elements of x.
struct NonZeroPlan {
  Shape x_shape;
  std::vector<int64_t> positions;

  Shape OutputShape() const {
    return {static_cast<int64_t>(x_shape.size()), static_cast<int64_t>(positions.size())};
  }
};

template <typename T>
void CollectNonZero(const T* x, int64_t n, std::vector<int64_t>& positions) {
  for (int64_t i = 0; i < n; ++i) {
    if (x[i] != T{0}) positions.push_back(i);
  }
}

StatusOr<NonZeroPlan> PlanNonZero(const NodeInputs& in) {
  const Node& node = in.node();
  const DType dtype = in.type(0).dtype;
  NonZeroPlan plan;
  plan.x_shape = in.type(0).shape;
  // float16 and bfloat16 are zero when every bit but the sign is (NaN is non-zero).
  const bool half = dtype == DType::kFloat16 || dtype == DType::kBFloat16;
  if (!half) COLLAGE_RETURN_IF_ERROR(DispatchAny(node, dtype, [](auto) {}));
  COLLAGE_ASSIGN_OR_RETURN(const Tensor* x, in.value(0, "X"));
  const int64_t n = x->num_elements();
  if (half) {
    const uint16_t* bits = x->data_as<uint16_t>();
    for (int64_t i = 0; i < n; ++i) {
      if ((bits[i] & 0x7fff) != 0) plan.positions.push_back(i);
    }
    return plan;
  }
  COLLAGE_RETURN_IF_ERROR(DispatchAny(node, dtype, [&](auto zero) {
    using T = decltype(zero);
    CollectNonZero(x->data_as<T>(), n, plan.positions);
  }));
  return plan;
}

// Output [rank, count]: row d holds the coordinate along dim d of each non-zero element. A
// scalar gives [0, count] (count 0 or 1), as the spec's shape says and ONNX Runtime does; the
// numpy reference (np.nonzero of a 0-d array) gave [1, count] and newer numpy refuses.
Status InferNonZero(InferContext& ctx) {
  COLLAGE_ASSIGN_OR_RETURN(NonZeroPlan plan, PlanNonZero(NodeInputs(ctx)));
  ctx.output_types[0] = {DType::kInt64, plan.OutputShape()};
  return Status::Ok();
}

Status RunNonZero(KernelContext& ctx) {
  COLLAGE_ASSIGN_OR_RETURN(NonZeroPlan plan, PlanNonZero(NodeInputs(ctx)));
  COLLAGE_RETURN_IF_ERROR(CheckAllocated(ctx, 0, plan.OutputShape()));
  const int64_t count = static_cast<int64_t>(plan.positions.size());
  const std::vector<int64_t> strides = StridesOf(plan.x_shape);
  int64_t* out = ctx.outputs[0].data_as<int64_t>();
  for (int64_t k = 0; k < count; ++k) {
    int64_t rest = plan.positions[static_cast<size_t>(k)];
    for (size_t d = 0; d < strides.size(); ++d) {
      out[static_cast<int64_t>(d) * count + k] = rest / strides[d];
      rest %= strides[d];
    }
  }
  return Status::Ok();
}

// ---- Compress ----

// Input viewed as [outer, dim, inner] around the axis (flattened input: [1, n, 1]); `picked`
// are the selected positions along dim, in order.
struct CompressPlan {
  int64_t outer = 1;
  int64_t dim = 0;
  int64_t inner = 1;
  std::vector<int64_t> picked;
  Shape out_shape;
};

StatusOr<CompressPlan> PlanCompress(const NodeInputs& in, int64_t opset) {
  const Node& node = in.node();
  const TensorType& x = in.type(0);
  const TensorType& condition = in.type(1);
  COLLAGE_RETURN_IF_ERROR(RequireFixedSizeDType(node, x.dtype, 0));
  if (condition.dtype != DType::kBool) {
    return OpError(node, StatusCode::kInvalidModel, "condition must be bool, is {}",
                   DTypeName(condition.dtype));
  }
  if (condition.shape.size() != 1) {
    return OpError(node, StatusCode::kInvalidModel, "condition must be 1-D, has shape {}",
                   ShapeToString(condition.shape));
  }
  CompressPlan plan;
  std::optional<int64_t> axis;
  if (node.attributes.Has("axis")) {
    const int64_t a = node.attributes.GetInt("axis", 0);
    // Negative axes came with opset 11.
    if (a < 0 && opset < 11) {
      return OpError(node, StatusCode::kInvalidModel,
                     "axis {} is negative, which needs opset 11 (the model has opset {})", a,
                     opset);
    }
    COLLAGE_ASSIGN_OR_RETURN(axis, NormalizeAxis(node, a, static_cast<int64_t>(x.shape.size())));
    const int64_t rank = static_cast<int64_t>(x.shape.size());
    plan.outer = DimProduct(x.shape, 0, *axis);
    plan.dim = x.shape[static_cast<size_t>(*axis)];
    plan.inner = DimProduct(x.shape, *axis + 1, rank);
  } else {
    plan.dim = x.num_elements();  // the input is flattened
  }
  COLLAGE_ASSIGN_OR_RETURN(const Tensor* cond, in.value(1, "condition"));
  const bool* c = cond->data_as<bool>();
  const int64_t length = cond->num_elements();
  // A shorter condition drops the rest of the axis (the spec). Entries beyond the axis must be
  // false: numpy.compress, which the reference implementation runs, fails on a true one.
  for (int64_t i = 0; i < length; ++i) {
    if (!c[i]) continue;
    if (i >= plan.dim) {
      return OpError(node, StatusCode::kInvalidArgument,
                     "condition entry {} is true, but the {} has only {} entries", i,
                     axis ? fmt::format("axis {}", *axis) : std::string("flattened input"),
                     plan.dim);
    }
    plan.picked.push_back(i);
  }
  const int64_t selected = static_cast<int64_t>(plan.picked.size());
  if (axis) {
    plan.out_shape = x.shape;
    plan.out_shape[static_cast<size_t>(*axis)] = selected;
  } else {
    plan.out_shape = {selected};
  }
  return plan;
}

Status InferCompress(InferContext& ctx) {
  COLLAGE_ASSIGN_OR_RETURN(CompressPlan plan, PlanCompress(NodeInputs(ctx), ctx.opset));
  ctx.output_types[0] = {ctx.input_type(0).dtype, plan.out_shape};
  return Status::Ok();
}

Status RunCompress(KernelContext& ctx) {
  COLLAGE_ASSIGN_OR_RETURN(CompressPlan plan, PlanCompress(NodeInputs(ctx), ctx.opset));
  COLLAGE_RETURN_IF_ERROR(CheckAllocated(ctx, 0, plan.out_shape));
  const Tensor& x = ctx.inputs[0];
  const size_t slice = static_cast<size_t>(plan.inner) * DTypeSize(x.dtype());
  const char* src = static_cast<const char*>(x.data());
  char* dst = static_cast<char*>(ctx.outputs[0].data());
  for (int64_t o = 0; o < plan.outer; ++o) {
    for (int64_t i : plan.picked) {
      const size_t from = static_cast<size_t>(o * plan.dim + i) * slice;
      std::memcpy(dst, src + from, slice);
      dst += slice;
    }
  }
  return Status::Ok();
}

// ---- Unique ----

// Input viewed as [outer, dim, inner] around the axis (no axis: the flattened input, [1, n,
// 1]); slice j of dim is every element x[o, j, i], in row-major order of (o, i). For each unique
// slice, in output order: `first`, where it first occurs, and `counts`; `inverse[j]`: the
// output position of slice j.
struct UniquePlan {
  int64_t outer = 1;
  int64_t dim = 0;
  int64_t inner = 1;
  std::vector<int64_t> first;
  std::vector<int64_t> counts;
  std::vector<int64_t> inverse;
  Shape y_shape;
};

// Slices compared lexicographically, elements by RanksBelow: NaN equals NaN, so NaNs merge
// into one unique value as numpy.unique does from 1.21 (equal_nan=True), and sort last. (With
// an axis numpy compares slices as raw records and keeps NaN slices apart; here they merge
// too, so that the result does not depend on whether an axis is given.)
template <typename T>
void GroupSlices(const T* x, UniquePlan& plan, bool sorted) {
  const int64_t dim = plan.dim;
  auto compare = [&](int64_t a, int64_t b) {  // -1, 0, 1 as slice a ranks below, equals, above b
    for (int64_t o = 0; o < plan.outer; ++o) {
      const T* pa = x + (o * dim + a) * plan.inner;
      const T* pb = x + (o * dim + b) * plan.inner;
      for (int64_t i = 0; i < plan.inner; ++i) {
        if (RanksBelow(pa[i], pb[i])) return -1;
        if (RanksBelow(pb[i], pa[i])) return 1;
      }
    }
    return 0;
  };
  std::vector<int64_t> order(static_cast<size_t>(dim));
  std::iota(order.begin(), order.end(), int64_t{0});
  // Stable: among equal slices the first occurrence leads its run.
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return compare(a, b) < 0; });
  plan.inverse.assign(static_cast<size_t>(dim), 0);
  for (size_t k = 0; k < order.size(); ++k) {
    if (k == 0 || compare(order[k - 1], order[k]) != 0) {
      plan.first.push_back(order[k]);
      plan.counts.push_back(0);
    }
    plan.inverse[static_cast<size_t>(order[k])] = static_cast<int64_t>(plan.first.size()) - 1;
    ++plan.counts.back();
  }
  if (sorted) return;
  // sorted=0: unique slices in the order they first occur.
  const size_t n = plan.first.size();
  std::vector<int64_t> by_first(n);
  std::iota(by_first.begin(), by_first.end(), int64_t{0});
  std::sort(by_first.begin(), by_first.end(), [&](int64_t a, int64_t b) {
    return plan.first[static_cast<size_t>(a)] < plan.first[static_cast<size_t>(b)];
  });
  std::vector<int64_t> position(n);  // sorted group -> output position
  std::vector<int64_t> first(n), counts(n);
  for (size_t p = 0; p < n; ++p) {
    const size_t g = static_cast<size_t>(by_first[p]);
    position[g] = static_cast<int64_t>(p);
    first[p] = plan.first[g];
    counts[p] = plan.counts[g];
  }
  for (int64_t& v : plan.inverse) v = position[static_cast<size_t>(v)];
  plan.first = std::move(first);
  plan.counts = std::move(counts);
}

StatusOr<UniquePlan> PlanUnique(const NodeInputs& in) {
  const Node& node = in.node();
  const TensorType& x = in.type(0);
  COLLAGE_RETURN_IF_ERROR(DispatchAny(node, x.dtype, [](auto) {}));
  const Attributes& a = node.attributes;
  const int64_t sorted = a.GetInt("sorted", 1);
  if (sorted != 0 && sorted != 1) {
    return OpError(node, StatusCode::kInvalidModel, "sorted is {}, must be 0 or 1", sorted);
  }
  UniquePlan plan;
  std::optional<int64_t> axis;
  if (a.Has("axis")) {
    const int64_t rank = static_cast<int64_t>(x.shape.size());
    COLLAGE_ASSIGN_OR_RETURN(axis, NormalizeAxis(node, a.GetInt("axis", 0), rank));
    plan.outer = DimProduct(x.shape, 0, *axis);
    plan.dim = x.shape[static_cast<size_t>(*axis)];
    plan.inner = DimProduct(x.shape, *axis + 1, rank);
  } else {
    plan.dim = x.num_elements();  // the input is flattened
  }
  COLLAGE_ASSIGN_OR_RETURN(const Tensor* value, in.value(0, "X"));
  COLLAGE_RETURN_IF_ERROR(DispatchAny(node, x.dtype, [&](auto zero) {
    using T = decltype(zero);
    GroupSlices(value->data_as<T>(), plan, sorted != 0);
  }));
  const int64_t unique = static_cast<int64_t>(plan.first.size());
  if (axis) {
    plan.y_shape = x.shape;
    plan.y_shape[static_cast<size_t>(*axis)] = unique;
  } else {
    plan.y_shape = {unique};
  }
  return plan;
}

bool HasOutput(const Node& node, size_t i) {
  return i < node.outputs.size() && node.outputs[i] != kNoValue;
}

// Outputs: Y, then the optional indices (first occurrences), inverse_indices and counts.
Status InferUnique(InferContext& ctx) {
  COLLAGE_ASSIGN_OR_RETURN(UniquePlan plan, PlanUnique(NodeInputs(ctx)));
  ctx.output_types[0] = {ctx.input_type(0).dtype, plan.y_shape};
  const int64_t unique = static_cast<int64_t>(plan.first.size());
  const Shape shapes[] = {{unique}, {plan.dim}, {unique}};
  for (size_t i = 1; i < 4; ++i) {
    if (HasOutput(ctx.node, i)) ctx.output_types[i] = {DType::kInt64, shapes[i - 1]};
  }
  return Status::Ok();
}

Status RunUnique(KernelContext& ctx) {
  COLLAGE_ASSIGN_OR_RETURN(UniquePlan plan, PlanUnique(NodeInputs(ctx)));
  COLLAGE_RETURN_IF_ERROR(CheckAllocated(ctx, 0, plan.y_shape));
  const std::vector<int64_t>* ids[] = {&plan.first, &plan.inverse, &plan.counts};
  for (size_t i = 1; i < 4; ++i) {
    if (!HasOutput(ctx.node, i) || i >= ctx.outputs.size() || ctx.outputs[i].empty()) continue;
    const std::vector<int64_t>& v = *ids[i - 1];
    COLLAGE_RETURN_IF_ERROR(CheckAllocated(ctx, i, {static_cast<int64_t>(v.size())}));
    std::copy(v.begin(), v.end(), ctx.outputs[i].data_as<int64_t>());
  }
  const Tensor& x = ctx.inputs[0];
  const size_t slice = static_cast<size_t>(plan.inner) * DTypeSize(x.dtype());
  const char* src = static_cast<const char*>(x.data());
  char* dst = static_cast<char*>(ctx.outputs[0].data());
  for (int64_t o = 0; o < plan.outer; ++o) {
    for (int64_t j : plan.first) {
      std::memcpy(dst, src + static_cast<size_t>(o * plan.dim + j) * slice, slice);
      dst += slice;
    }
  }
  return Status::Ok();
}

// ---- NonMaxSuppression ----

using Selected = std::array<int64_t, 3>;  // (batch, class, box)

// One box as its extent along x and y, whatever its encoding.
template <typename T>
struct Extent {
  T x_min, x_max, y_min, y_max;
};

// center_point_box=0: [y1, x1, y2, x2], either corner first; 1: [x_center, y_center, width,
// height]. The arithmetic (and NaN handling) follows the ONNX reference implementation.
template <typename T>
Extent<T> ToExtent(const T* b, bool center) {
  if (center) {
    const T half_w = b[2] / T{2};
    const T half_h = b[3] / T{2};
    return {b[0] - half_w, b[0] + half_w, b[1] - half_h, b[1] + half_h};
  }
  auto lo = [](T p, T q) { return p >= q ? q : p; };
  auto hi = [](T p, T q) { return p >= q ? p : q; };
  return {lo(b[1], b[3]), hi(b[1], b[3]), lo(b[0], b[2]), hi(b[0], b[2])};
}

// Whether IoU(a, b) > threshold (strictly). Boxes that do not overlap, or have no area, never
// suppress each other.
template <typename T>
bool Suppresses(const Extent<T>& a, const Extent<T>& b, T threshold) {
  const T ix_min = std::max(a.x_min, b.x_min);
  const T ix_max = std::min(a.x_max, b.x_max);
  if (ix_max <= ix_min) return false;
  const T iy_min = std::max(a.y_min, b.y_min);
  const T iy_max = std::min(a.y_max, b.y_max);
  if (iy_max <= iy_min) return false;
  const T intersection = (ix_max - ix_min) * (iy_max - iy_min);
  if (intersection <= 0) return false;
  const T area_a = (a.x_max - a.x_min) * (a.y_max - a.y_min);
  const T area_b = (b.x_max - b.x_min) * (b.y_max - b.y_min);
  const T union_area = area_a + area_b - intersection;
  if (area_a <= 0 || area_b <= 0 || union_area <= 0) return false;
  return intersection / union_area > threshold;
}

// Scores ranked for selection: higher first, equal scores by lower box index (ONNX Runtime's
// and the reference's order). The spec says nothing of NaN; here a NaN score ranks below
// every number, so such boxes come last (and a score_threshold drops them).
template <typename T>
bool ScoreBefore(T a, int64_t ia, T b, int64_t ib) {
  if (std::isnan(a) || std::isnan(b)) {
    if (std::isnan(a) != std::isnan(b)) return std::isnan(b);
    return ia < ib;
  }
  if (a != b) return a > b;
  return ia < ib;
}

template <typename T>
void SelectBoxes(const T* boxes, const T* scores, int64_t batches, int64_t classes,
                 int64_t num_boxes, int64_t max_per_class, T iou_threshold,
                 bool has_score_threshold, T score_threshold, bool center,
                 std::vector<Selected>& out) {
  std::vector<Extent<T>> extents(static_cast<size_t>(num_boxes));
  std::vector<int64_t> candidates;
  std::vector<int64_t> kept;
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t n = 0; n < num_boxes; ++n) {
      extents[static_cast<size_t>(n)] = ToExtent(boxes + (b * num_boxes + n) * 4, center);
    }
    for (int64_t c = 0; c < classes; ++c) {
      const T* s = scores + (b * classes + c) * num_boxes;
      candidates.clear();
      for (int64_t n = 0; n < num_boxes; ++n) {
        // Kept only when strictly above the threshold (the reference, ONNX Runtime).
        if (!has_score_threshold || s[n] > score_threshold) candidates.push_back(n);
      }
      std::sort(candidates.begin(), candidates.end(),
                [&](int64_t p, int64_t q) { return ScoreBefore(s[p], p, s[q], q); });
      kept.clear();
      for (int64_t n : candidates) {
        if (static_cast<int64_t>(kept.size()) >= max_per_class) break;
        const Extent<T>& e = extents[static_cast<size_t>(n)];
        const bool suppressed = std::any_of(kept.begin(), kept.end(), [&](int64_t k) {
          return Suppresses(e, extents[static_cast<size_t>(k)], iou_threshold);
        });
        if (suppressed) continue;
        kept.push_back(n);
        out.push_back({b, c, n});
      }
    }
  }
}

// Optional scalar input i: nullptr when absent or empty (the reference implementation treats
// an empty tensor as absent).
StatusOr<const Tensor*> OptionalScalar(const NodeInputs& in, size_t i, const char* name) {
  if (!in.has(i) || in.type(i).num_elements() == 0) return static_cast<const Tensor*>(nullptr);
  return in.value(i, name);
}

// The shapes and dtypes of NonMaxSuppression's inputs, which need no values.
Status CheckNmsTypes(const NodeInputs& in) {
  const Node& node = in.node();
  const TensorType& boxes = in.type(0);
  const TensorType& scores = in.type(1);
  if (boxes.dtype != DType::kFloat32 && boxes.dtype != DType::kFloat64) {
    return OpError(node, StatusCode::kUnsupported,
                   "boxes of dtype {} are not supported (float32, float64 are)",
                   DTypeName(boxes.dtype));
  }
  if (scores.dtype != boxes.dtype) {
    return OpError(node, StatusCode::kInvalidModel, "scores are {}, boxes {}: they must match",
                   DTypeName(scores.dtype), DTypeName(boxes.dtype));
  }
  if (boxes.shape.size() != 3 || boxes.shape[2] != 4) {
    return OpError(node, StatusCode::kInvalidModel,
                   "boxes must have shape [batches, boxes, 4], have {}",
                   ShapeToString(boxes.shape));
  }
  if (scores.shape.size() != 3 || scores.shape[0] != boxes.shape[0] ||
      scores.shape[2] != boxes.shape[1]) {
    return OpError(node, StatusCode::kInvalidModel,
                   "scores must have shape [{}, classes, {}] to match boxes of shape {}, have {}",
                   boxes.shape[0], boxes.shape[1], ShapeToString(boxes.shape),
                   ShapeToString(scores.shape));
  }
  const char* names[] = {"max_output_boxes_per_class", "iou_threshold", "score_threshold"};
  for (size_t i = 2; i < 5; ++i) {
    if (!in.has(i)) continue;
    const TensorType& t = in.type(i);
    const char* name = names[i - 2];
    if (t.num_elements() > 1) {
      return OpError(node, StatusCode::kInvalidModel, "{} must be a scalar, has shape {}", name,
                     ShapeToString(t.shape));
    }
    // The spec's dtypes: int64 for the count, float for the thresholds (or the boxes' dtype,
    // so that float64 boxes can be compared exactly).
    const bool ok =
        i == 2 ? t.dtype == DType::kInt64 : t.dtype == DType::kFloat32 || t.dtype == boxes.dtype;
    if (!ok) {
      return OpError(node, StatusCode::kInvalidModel, "{} has dtype {}, expected {}", name,
                     DTypeName(t.dtype), i == 2 ? "int64" : "float32");
    }
  }
  const int64_t center = node.attributes.GetInt("center_point_box", 0);
  if (center != 0 && center != 1) {
    return OpError(node, StatusCode::kInvalidModel, "center_point_box is {}, must be 0 or 1",
                   center);
  }
  return Status::Ok();
}

// The selected (batch, class, box) triples, in output order.
StatusOr<std::vector<Selected>> PlanNms(const NodeInputs& in) {
  COLLAGE_RETURN_IF_ERROR(CheckNmsTypes(in));
  const Node& node = in.node();
  COLLAGE_ASSIGN_OR_RETURN(const Tensor* boxes, in.value(0, "boxes"));
  COLLAGE_ASSIGN_OR_RETURN(const Tensor* scores, in.value(1, "scores"));
  COLLAGE_ASSIGN_OR_RETURN(const Tensor* max_out,
                           OptionalScalar(in, 2, "max_output_boxes_per_class"));
  COLLAGE_ASSIGN_OR_RETURN(const Tensor* iou, OptionalScalar(in, 3, "iou_threshold"));
  COLLAGE_ASSIGN_OR_RETURN(const Tensor* score, OptionalScalar(in, 4, "score_threshold"));
  // The default 0 selects nothing; so does a negative count (as in the reference).
  const int64_t max_per_class = max_out ? std::max<int64_t>(max_out->data_as<int64_t>()[0], 0) : 0;
  const bool center = node.attributes.GetInt("center_point_box", 0) != 0;
  std::vector<Selected> selected;
  COLLAGE_RETURN_IF_ERROR(DispatchFloat(node, boxes->dtype(), [&](auto zero) {
    using T = decltype(zero);
    // Thresholds are float32 or T, so converting them to T is exact.
    const T iou_threshold = iou ? static_cast<T>(iou->ToVector<double>()[0]) : T{0};
    // Without score_threshold no box is dropped for its score.
    // (A flag and a value rather than std::optional: GCC 12 warns, wrongly, that an optional
    // of double may be read uninitialized here.)
    const T score_threshold = score ? static_cast<T>(score->ToVector<double>()[0]) : T{0};
    SelectBoxes(boxes->data_as<T>(), scores->data_as<T>(), boxes->dim(0), scores->dim(1),
                boxes->dim(1), max_per_class, iou_threshold, score != nullptr, score_threshold,
                center, selected);
  }));
  return selected;
}

Shape NmsShape(const std::vector<Selected>& selected) {
  return {static_cast<int64_t>(selected.size()), 3};
}

// Output int64 [selected, 3]: (batch, class, box), by batch, then class, then rank.
Status InferNms(InferContext& ctx) {
  COLLAGE_ASSIGN_OR_RETURN(std::vector<Selected> selected, PlanNms(NodeInputs(ctx)));
  ctx.output_types[0] = {DType::kInt64, NmsShape(selected)};
  return Status::Ok();
}

Status RunNms(KernelContext& ctx) {
  COLLAGE_ASSIGN_OR_RETURN(std::vector<Selected> selected, PlanNms(NodeInputs(ctx)));
  COLLAGE_RETURN_IF_ERROR(CheckAllocated(ctx, 0, NmsShape(selected)));
  int64_t* out = ctx.outputs[0].data_as<int64_t>();
  for (const Selected& s : selected) out = std::copy(s.begin(), s.end(), out);
  return Status::Ok();
}

}  // namespace

void RegisterSelectionOps(OpRegistry& registry) {
  registry.Register(MakeOpDef("NonZero", OpKind::kOpaque, 1, 1, InferNonZero, RunNonZero));
  registry.Register(MakeOpDef("Compress", OpKind::kOpaque, 2, 2, InferCompress, RunCompress));
  // Y is required; indices, inverse_indices and counts are optional.
  OpDef unique = MakeOpDef("Unique", OpKind::kOpaque, 1, 1, InferUnique, RunUnique);
  unique.max_outputs = 4;
  registry.Register(std::move(unique));
  registry.Register(MakeOpDef("NonMaxSuppression", OpKind::kOpaque, 2, 5, InferNms, RunNms));
}

}  // namespace collage
