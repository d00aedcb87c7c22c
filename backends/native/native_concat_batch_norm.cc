#include "native_concat_batch_norm.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "collage/sdk/errors.h"
#include "collage/sdk/op_params.h"
#include "native_group_values.h"
#include "ops/elementwise.h"

namespace collage::native {
namespace {

// The nodes of one match: the Concat, the BatchNormalization and the activation after it
// (null when the match ends at the BatchNormalization).
struct MatchedNodes {
  const Node* concat = nullptr;
  const Node* batch_norm = nullptr;
  const Node* activation = nullptr;
};

MatchedNodes NodesOf(const Match& match) {
  MatchedNodes nodes;
  for (NodeId id : match.op_nodes) {
    if (id < 0) continue;
    const Node& node = match.graph->node(id);
    if (node.op_type == "Concat") {
      nodes.concat = &node;
    } else if (node.op_type == "BatchNormalization") {
      nodes.batch_norm = &node;
    } else {
      nodes.activation = &node;
    }
  }
  return nodes;
}

bool IsFloat32(const Graph& graph, ValueId value) {
  return value != kNoValue && graph.value(value).type.dtype == DType::kFloat32 &&
         graph.value(value).type.is_static();
}

// A constant float32 vector of `n` elements (a BatchNormalization parameter).
bool ChannelVector(const Graph& graph, ValueId value, int64_t n) {
  if (!IsFloat32(graph, value) || !graph.value(value).is_constant()) return false;
  const Shape& shape = graph.value(value).type.shape;
  return shape.size() == 1 && shape[0] == n;
}

// Concat along dim 1 of float32 tensors of one rank, every other dim equal to the output's.
bool ChannelConcatOk(const Graph& graph, const Node& concat, bool channels_last) {
  if (concat.inputs.empty() || concat.outputs.size() != 1 || !IsFloat32(graph, concat.outputs[0])) {
    return false;
  }
  const Shape& y = graph.value(concat.outputs[0]).type.shape;
  const int64_t rank = static_cast<int64_t>(y.size());
  if (rank < 2 || (channels_last && (rank < 3 || rank > 5))) return false;
  int64_t axis = concat.attributes.GetInt("axis", 0);
  if (axis < 0) axis += rank;
  if (axis != 1) return false;
  for (ValueId in : concat.inputs) {
    if (!IsFloat32(graph, in)) return false;
    // A constant part is held plain: the channels-last form reads every part channels-last.
    if (channels_last && graph.value(in).is_constant()) return false;
    const Shape& x = graph.value(in).type.shape;
    if (x.size() != y.size()) return false;
    for (size_t d = 0; d < x.size(); ++d) {
      if (d != 1 && x[d] != y[d]) return false;
    }
  }
  return true;
}

// Inference form only: one output, constant statistics, per-channel parameters.
bool InferenceBatchNormOk(const Graph& graph, const Node& bn) {
  if (bn.inputs.size() != 5 || bn.outputs.empty() || !IsFloat32(graph, bn.outputs[0])) return false;
  for (size_t i = 1; i < bn.outputs.size(); ++i) {
    if (bn.outputs[i] != kNoValue) return false;
  }
  if (bn.attributes.GetInt("training_mode", 0) != 0) return false;
  if (bn.attributes.GetInt("spatial", 1) != 1) return false;  // opset < 9 per-element form
  const int64_t channels = graph.value(bn.outputs[0]).type.shape[1];
  for (size_t i = 1; i < 5; ++i) {
    if (!ChannelVector(graph, bn.inputs[i], channels)) return false;
  }
  return true;
}

// The activation after the normalisation, as the reference kernels compute it (NaN stays
// NaN in each).
struct Activation {
  enum class Kind { kNone, kRelu, kLeakyRelu, kClip };
  Kind kind = Kind::kNone;
  float alpha = 0;  // LeakyRelu
  float lo = -std::numeric_limits<float>::infinity();
  float hi = std::numeric_limits<float>::infinity();
};

StatusOr<Activation> ReadActivation(const Graph& graph, const Node* node) {
  Activation act;
  if (node == nullptr) return act;
  if (node->op_type == "Relu") {
    act.kind = Activation::Kind::kRelu;
  } else if (node->op_type == "LeakyRelu") {
    act.kind = Activation::Kind::kLeakyRelu;
    act.alpha = node->attributes.GetFloat("alpha", 0.01f);
  } else if (node->op_type == "Clip") {
    COLLAGE_ASSIGN_OR_RETURN(const ClipBounds<float> bounds, ReadClipBounds(graph, *node));
    act.kind = Activation::Kind::kClip;
    act.lo = bounds.lo;
    act.hi = bounds.hi;
  } else {
    return Unsupported("{} '{}' is not an activation this kernel fuses", node->op_type, node->name);
  }
  return act;
}

// Calls body(f) with the activation as a functor, so that the inner loops are specialised.
template <typename Body>
void WithActivation(const Activation& act, Body&& body) {
  switch (act.kind) {
    case Activation::Kind::kNone: body([](float x) { return x; }); return;
    case Activation::Kind::kRelu: body([](float x) { return x < 0.0f ? 0.0f : x; }); return;
    case Activation::Kind::kLeakyRelu: {
      const float alpha = act.alpha;
      body([alpha](float x) { return x < 0.0f ? alpha * x : x; });
      return;
    }
    case Activation::Kind::kClip: {
      const float lo = act.lo;
      const float hi = act.hi;
      body([lo, hi](float x) { return std::min(std::max(x, lo), hi); });
      return;
    }
  }
}

class ConcatBatchNormKernel final : public Kernel {
 public:
  ConcatBatchNormKernel(const CompileRequest& request, bool channels_last)
      : values_(request), channels_last_(channels_last) {}

  void SetLayouts(std::vector<Layout> inputs, const Layout& output) {
    input_layouts_ = std::move(inputs);
    output_layouts_ = {output};
  }

  Status Run(const KernelBuffers& buffers) const override {
    std::vector<const float*> parts;
    for (ValueId part : parts_) {
      parts.push_back(static_cast<const float*>(values_.Data(part, buffers)));
    }
    float* out = static_cast<float*>(values_.Data(output_, buffers));
    WithActivation(activation_, [&](auto activate) {
      if (channels_last_) {
        RunChannelsLast(parts, out, activate);
      } else {
        RunPlain(parts, out, activate);
      }
    });
    return Status::Ok();
  }

  // Filled by CompileConcatBatchNorm.
  GroupValues values_;
  bool channels_last_;
  std::vector<ValueId> parts_;          // the Concat's inputs, in order (repeats allowed)
  std::vector<int64_t> first_channel_;  // each part's first channel in the output
  std::vector<int64_t> part_channels_;
  ValueId output_ = kNoValue;
  int64_t batch_ = 0;
  int64_t channels_ = 0;
  int64_t spatial_ = 0;  // product of the dims after the channels
  // Per output channel, as the reference BatchNormalization rounds them: y = (x - mean) *
  // factor + bias.
  std::vector<float> mean_, factor_, bias_;
  Activation activation_;

 private:
  // [N][C][S]: one row of S elements per (n, c).
  template <typename Activate>
  void RunPlain(const std::vector<const float*>& parts, float* out, Activate activate) const {
    ParallelFor(batch_ * channels_, spatial_, [&](int64_t begin, int64_t end) {
      size_t part = 0;
      for (int64_t row = begin; row < end; ++row) {
        const int64_t n = row / channels_;
        const int64_t c = row % channels_;
        while (c >= first_channel_[part] + part_channels_[part]) ++part;
        while (c < first_channel_[part]) --part;
        const int64_t local = c - first_channel_[part];
        const float* x = parts[part] + (n * part_channels_[part] + local) * spatial_;
        float* y = out + row * spatial_;
        const float m = mean_[static_cast<size_t>(c)];
        const float a = factor_[static_cast<size_t>(c)];
        const float b = bias_[static_cast<size_t>(c)];
        for (int64_t i = 0; i < spatial_; ++i) y[i] = activate((x[i] - m) * a + b);
      }
    });
  }

  // [N][S][C]: per position, each part's channels land at their offset in the output's C.
  template <typename Activate>
  void RunChannelsLast(const std::vector<const float*>& parts, float* out,
                       Activate activate) const {
    ParallelFor(batch_ * spatial_, channels_, [&](int64_t begin, int64_t end) {
      for (int64_t pixel = begin; pixel < end; ++pixel) {
        float* y_pixel = out + pixel * channels_;
        for (size_t p = 0; p < parts.size(); ++p) {
          const int64_t count = part_channels_[p];
          const int64_t first = first_channel_[p];
          const float* x = parts[p] + pixel * count;
          float* y = y_pixel + first;
          const float* m = mean_.data() + first;
          const float* a = factor_.data() + first;
          const float* b = bias_.data() + first;
          for (int64_t c = 0; c < count; ++c) y[c] = activate((x[c] - m[c]) * a[c] + b[c]);
        }
      }
    });
  }
};

}  // namespace

Pattern ConcatBatchNormPattern() {
  const Pattern bn = Op("BatchNormalization")(Op("Concat"), Const(), Const(), Const(), Const());
  return Alt(
      {Op({"Relu", "LeakyRelu"})(bn), Op("Clip")(bn, Optional(Const()), Optional(Const())), bn});
}

bool ConcatBatchNormOk(const Match& match, bool channels_last) {
  const Graph& graph = *match.graph;
  const MatchedNodes nodes = NodesOf(match);
  if (nodes.concat == nullptr || nodes.batch_norm == nullptr) return false;
  if (!ChannelConcatOk(graph, *nodes.concat, channels_last)) return false;
  if (!InferenceBatchNormOk(graph, *nodes.batch_norm)) return false;
  if (nodes.activation != nullptr) {
    if (!IsFloat32(graph, nodes.activation->outputs[0])) return false;
    if (!ReadActivation(graph, nodes.activation).ok()) return false;
  }
  return true;
}

StatusOr<std::unique_ptr<Kernel>> CompileConcatBatchNorm(const CompileRequest& request,
                                                         const Match& match, bool channels_last) {
  const Graph& graph = *request.graph;
  if (!ConcatBatchNormOk(match, channels_last)) {
    return Unsupported(
        "the group is not a channel Concat, an inference BatchNormalization and "
        "an optional Relu, LeakyRelu or Clip of float32 tensors");
  }
  const MatchedNodes nodes = NodesOf(match);
  if (request.outputs.size() != 1) {
    return Unsupported("the fused Concat and BatchNormalization compute one output, not {}",
                       request.outputs.size());
  }
  auto kernel = std::make_unique<ConcatBatchNormKernel>(request, channels_last);
  kernel->output_ = request.outputs[0];
  const Shape& y = graph.value(kernel->output_).type.shape;
  kernel->batch_ = y[0];
  kernel->channels_ = y[1];
  kernel->spatial_ = 1;
  for (size_t d = 2; d < y.size(); ++d) kernel->spatial_ *= y[d];
  int64_t first = 0;
  for (ValueId part : nodes.concat->inputs) {
    const int64_t count = graph.value(part).type.shape[1];
    if (count == 0) continue;  // an empty part adds no channels
    kernel->parts_.push_back(part);
    kernel->first_channel_.push_back(first);
    kernel->part_channels_.push_back(count);
    first += count;
  }
  if (first != kernel->channels_) {
    return Internal("Concat '{}': parts hold {} channels, the output {}", nodes.concat->name, first,
                    kernel->channels_);
  }

  // The reference kernel's arithmetic: factor in double, every parameter rounded to float.
  const Node& bn = *nodes.batch_norm;
  const double epsilon = bn.attributes.GetFloat("epsilon", 1e-5f);
  auto parameter = [&](size_t input) {
    return graph.value(bn.inputs[input]).constant->ToVector<double>();
  };
  const std::vector<double> scale = parameter(1), bias = parameter(2), mean = parameter(3),
                            var = parameter(4);
  for (size_t c = 0; c < static_cast<size_t>(kernel->channels_); ++c) {
    kernel->mean_.push_back(static_cast<float>(mean[c]));
    kernel->factor_.push_back(static_cast<float>(scale[c] / std::sqrt(var[c] + epsilon)));
    kernel->bias_.push_back(static_cast<float>(bias[c]));
  }
  COLLAGE_ASSIGN_OR_RETURN(kernel->activation_, ReadActivation(graph, nodes.activation));

  // Images (rank 3 to 5) channels-last in that form; anything else plain.
  const Layout layout = channels_last ? Layout::ChannelsLast() : Layout::Plain();
  std::vector<Layout> inputs;
  for (ValueId in : request.inputs) {
    inputs.push_back(graph.value(in).type.shape.size() == y.size() ? layout : Layout::Plain());
  }
  kernel->SetLayouts(std::move(inputs), layout);
  return std::unique_ptr<Kernel>(std::move(kernel));
}

}  // namespace collage::native
