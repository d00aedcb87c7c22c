// Resize (opset 10+) and Upsample with nearest or linear interpolation over the spatial dims
// of a 3-D to 5-D tensor, constant scales or sizes, as oneDNN's resampling primitive, plain
// and "_blocked".
//
// oneDNN maps output coordinate o of an axis resized from `in` to `out` elements to
// s = (o + 0.5) * in / out - 0.5 (its documented formula: half_pixel with the ratio of the
// lengths), rounds s to the nearest index (ties away from zero) for nearest, and interpolates
// between the clamped neighbours for linear. ONNX's modes agree with that only in part
// (half_pixel and pytorch_half_pixel when the scale is out / in; asymmetric + floor, the
// Upsample form, for integer enlargements; round_prefer_floor only where no tie occurs), so
// each axis's coordinates are computed both ways here and the rule is offered only where they
// pick the same input elements (nearest, with no tie oneDNN might round either way) or the
// same positions (linear).
#include <algorithm>
#include <cmath>

#include "collage/sdk/op_params.h"
#include "onednn_epilogue.h"
#include "onednn_layout.h"
#include "onednn_rules.h"

namespace collage::onednn {
namespace {

using dnnl::memory;

// What an ONNX Resize/Upsample node asks for, in the terms its coordinate mapping needs.
struct ResizeSpec {
  bool linear = false;
  std::string transform;       // coordinate_transformation_mode
  std::string nearest_mode;    // "simple": the Upsample / Resize-10 rule
  std::vector<double> scales;  // per axis: what the coordinate transform divides by
};

// A constant input's values as doubles (float32, float64 or int64); nullopt when the input is
// not a constant; an empty vector when it is absent or empty.
std::optional<std::vector<double>> ConstantValues(const Graph& graph, const Node& node, size_t i) {
  if (i >= node.inputs.size() || node.inputs[i] == kNoValue) return std::vector<double>{};
  const Value& v = graph.value(node.inputs[i]);
  if (!v.is_constant()) return std::nullopt;
  const Tensor& t = *v.constant;
  std::vector<double> out;
  for (int64_t k = 0; k < t.num_elements(); ++k) {
    switch (t.dtype()) {
      case DType::kFloat32: out.push_back(t.data_as<float>()[k]); break;
      case DType::kFloat64: out.push_back(t.data_as<double>()[k]); break;
      case DType::kInt64: out.push_back(static_cast<double>(t.data_as<int64_t>()[k])); break;
      default: return std::nullopt;
    }
  }
  return out;
}

// The node's spec; nullopt for forms this rule leaves to others: cubic, antialias, axes,
// keep_aspect_ratio_policy, tf_crop_and_resize, non-constant scales or sizes.
std::optional<ResizeSpec> ReadSpec(const Graph& graph, const Node& node) {
  const Attributes& a = node.attributes;
  const bool legacy = node.op_type == "Upsample" || graph.opset() < 11;
  const std::string mode = a.GetString("mode", "nearest");
  ResizeSpec spec;
  if (mode == "linear" || (legacy && mode == "bilinear")) {
    spec.linear = true;
  } else if (mode != "nearest") {
    return std::nullopt;
  }
  const Shape& x = graph.value(node.inputs[0]).type.shape;
  const Shape& y = graph.value(node.outputs[0]).type.shape;
  std::optional<std::vector<double>> scales, sizes = std::vector<double>{};
  if (legacy) {
    spec.transform = "asymmetric";
    spec.nearest_mode = "simple";
    if (node.op_type == "Upsample" && a.Has("scales")) {
      scales = std::vector<double>{};
      for (float f : a.GetFloats("scales")) scales->push_back(f);
    } else {
      scales = ConstantValues(graph, node, 1);
    }
  } else {
    spec.transform = a.GetString("coordinate_transformation_mode", "half_pixel");
    spec.nearest_mode = a.GetString("nearest_mode", "round_prefer_floor");
    if (a.GetInt("antialias", 0) != 0 || a.Has("axes") ||
        a.GetString("keep_aspect_ratio_policy", "stretch") != "stretch") {
      return std::nullopt;
    }
    // roi is read by tf_crop_and_resize only, but must not be a kernel input.
    if (!ConstantValues(graph, node, 1)) return std::nullopt;
    scales = ConstantValues(graph, node, 2);
    sizes = ConstantValues(graph, node, 3);
  }
  if (!scales || !sizes) return std::nullopt;
  if (!scales->empty() && scales->size() != x.size()) return std::nullopt;
  if (scales->empty() && sizes->size() != x.size()) return std::nullopt;
  for (size_t d = 0; d < x.size(); ++d) {
    spec.scales.push_back(!scales->empty() ? (*scales)[d]
                                           : static_cast<double>(y[d]) / static_cast<double>(x[d]));
    if (!(spec.scales.back() > 0.0)) return std::nullopt;
  }
  return spec;
}

// Whether oneDNN's mapping of one axis equals the spec's.
bool AxisAgrees(const ResizeSpec& spec, int64_t in, int64_t out, double scale) {
  const double ratio = static_cast<double>(in) / static_cast<double>(out);
  const double last = static_cast<double>(in - 1);
  for (int64_t o = 0; o < out; ++o) {
    const double s = (static_cast<double>(o) + 0.5) * ratio - 0.5;
    // ONNX's coordinate (collage/sdk/op_params.h: the reference kernel's own).
    const std::optional<double> x =
        ResizeSourceCoordinate(spec.transform, static_cast<double>(o), scale, in, out);
    if (!x) return false;
    if (spec.linear) {
      // Both clamp the neighbours to the edge: positions past an edge read the edge element.
      if (std::abs(std::clamp(s, 0.0, last) - std::clamp(*x, 0.0, last)) > 1e-6 * (last + 1.0)) {
        return false;
      }
      continue;
    }
    // A tie (or what float rounding may make one) could go either way in oneDNN's kernels.
    if (std::abs(s - std::floor(s) - 0.5) < 1e-3) return false;
    const int64_t dnnl_index = std::clamp<int64_t>(static_cast<int64_t>(std::lround(s)), 0, in - 1);
    const std::optional<int64_t> onnx_index = ResizeNearestIndex(spec.nearest_mode, *x, scale);
    if (!onnx_index || std::clamp<int64_t>(*onnx_index, 0, in - 1) != dnnl_index) return false;
  }
  return true;
}

// The resampling algorithm for the node; nullopt when oneDNN's result would differ from
// ONNX's or the form is not one oneDNN has.
std::optional<dnnl::algorithm> ResampleAlgorithm(const Graph& graph, const Node& node) {
  if (node.inputs.empty() || node.outputs.size() != 1 || !IsFloatValue(graph, node.inputs[0]) ||
      !IsFloatValue(graph, node.outputs[0])) {
    return std::nullopt;
  }
  const Shape& x = graph.value(node.inputs[0]).type.shape;
  const Shape& y = graph.value(node.outputs[0]).type.shape;
  if (x.size() < 3 || x.size() > 5 || y.size() != x.size()) return std::nullopt;
  // oneDNN resamples the spatial dims only.
  if (x[0] != y[0] || x[1] != y[1] || NumElements(x) == 0 || NumElements(y) == 0) {
    return std::nullopt;
  }
  const std::optional<ResizeSpec> spec = ReadSpec(graph, node);
  if (!spec) return std::nullopt;
  for (size_t d = 2; d < x.size(); ++d) {
    if (!AxisAgrees(*spec, x[d], y[d], spec->scales[d])) return std::nullopt;
  }
  return spec->linear ? dnnl::algorithm::resampling_linear : dnnl::algorithm::resampling_nearest;
}

bool ResampleOk(const Graph& graph, const Node& node) {
  return ResampleAlgorithm(graph, node).has_value();
}

struct ResampleDescs {
  memory::desc src, dst;
  dnnl::resampling_forward::desc OpDesc(dnnl::algorithm algorithm) const {
    return dnnl::resampling_forward::desc(dnnl::prop_kind::forward_inference, algorithm, src, dst);
  }
};

ResampleDescs DescribeResample(const Graph& graph, const Node& node, bool blocked) {
  ResampleDescs d;
  d.src = ActivationDesc(graph.value(node.inputs[0]).type.shape, blocked);
  d.dst = SameFormatAs(d.src, graph.value(node.outputs[0]).type.shape);
  return d;
}

StatusOr<std::unique_ptr<Kernel>> CompileResample(const CompileRequest& request, const Match& match,
                                                  bool blocked) {
  const Graph& graph = *request.graph;
  const Node& node = MainNode(match);
  const std::optional<dnnl::algorithm> algorithm = ResampleAlgorithm(graph, node);
  if (!algorithm) return Unsupported("{} '{}' is not supported", node.op_type, node.name);
  std::unique_ptr<Kernel> kernel;
  COLLAGE_RETURN_IF_ERROR(Guard("resampling", [&]() -> Status {
    const ResampleDescs d = DescribeResample(graph, node, blocked);
    dnnl::resampling_forward::primitive_desc pd(d.OpDesc(*algorithm), BaseAttr(), Engine());
    KernelBuilder builder(request);
    COLLAGE_RETURN_IF_ERROR(builder.BindValue(node.inputs[0], DNNL_ARG_SRC, d.src));
    COLLAGE_RETURN_IF_ERROR(builder.BindOutput(node.outputs[0], DNNL_ARG_DST, d.dst));
    COLLAGE_ASSIGN_OR_RETURN(kernel,
                             builder.Finish(std::string("resampling ") + pd.impl_info_str(),
                                            dnnl::resampling_forward(pd), pd.scratchpad_desc()));
    return Status();
  }));
  return kernel;
}

// Declines what oneDNN runs only with its reference implementation (IsReferenceImplementation).
template <bool kBlocked>
bool NotReference(const Match& m) {
  return HasOptimizedImplementation([&m] {
    const Node& node = MainNode(m);
    const ResampleDescs d = DescribeResample(*m.graph, node, kBlocked);
    return dnnl::resampling_forward::primitive_desc(d.OpDesc(*ResampleAlgorithm(*m.graph, node)),
                                                    BaseAttr(), Engine())
        .impl_info_str();
  });
}

bool BlockedDiffers(const Match& m) {
  const Shape& x = m.graph->value(MainNode(m).inputs[0]).type.shape;
  return x.size() >= 4 && HasBlockedForm(x);
}

}  // namespace

void AddResampleRules(std::vector<RuleEntry>& rules) {
  const Pattern resize = Op({"Resize", "Upsample"}).If(ResampleOk);
  rules.push_back({Rule("resize", resize)
                       .Where(NotReference<false>)
                       .Compiles([](const CompileRequest& r, const Match& m) {
                         return CompileResample(r, m, false);
                       }),
                   false});
  rules.push_back({Rule("resize_blocked", resize)
                       .Where(BlockedDiffers)
                       .Where(NotReference<true>)
                       .Compiles([](const CompileRequest& r, const Match& m) {
                         return CompileResample(r, m, true);
                       }),
                   true});
}

}  // namespace collage::onednn
