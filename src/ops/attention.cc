// com.microsoft Attention: BERT's self-attention as ONNX Runtime's transformer optimizer fuses
// it, with the Q, K and V projections packed in one weight. Per the contrib op spec:
//   QKV = input (batch, S, input_hidden) x weights (input_hidden, Hq + Hk + Hv) + bias
//   per head h of num_heads: scores = scale * Q_h K_h^T + mask, P = softmax(scores) over keys,
//   output[:, :, h's columns of Hv] = P V_h
// scale is 1/sqrt(Hq / num_heads) unless given; Hq = Hk = Hv unless qkv_hidden_sizes says.
// The mask is added to the scores, as ONNX Runtime's CPU kernel adds it: 0 where a key may be
// attended and mask_filter_value (-10000 by default) where not, from mask_index given as
//   (batch)                 each row's length: keys at or past it are masked (right padding);
//   (2 * batch)             each row's end, then its start: keys outside [start, end) masked;
//   (batch, S)              a raw mask: keys whose value is 0 (not positive) masked;
//   (batch, S, S)           a raw mask per query.
// unidirectional = 1 also adds mask_filter_value to every key after the query (causal).
// What this kernel does not implement is refused by name: past and present state (inputs
// past, past_sequence_length, output present), attention_bias, rotary embedding, a shared
// past/present buffer, the 4-D (batch, 1, max, max) mask and the (3 * batch + 2) index.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ops/elementwise.h"
#include "ops/kernels/gemm_kernel.h"
#include "ops/op_helpers.h"

namespace collage {
namespace {

constexpr char kMicrosoftDomain[] = "com.microsoft";
constexpr float kDefaultMaskFilterValue = -10000.0f;

enum Input : size_t {
  kInput = 0,
  kWeights = 1,
  kBias = 2,
  kMaskIndex = 3,
  kPast = 4,
  kAttentionBias = 5,
  kPastSequenceLength = 6,
};

// The geometry of one Attention node, read from its attributes and input shapes.
struct AttentionShape {
  int64_t batch = 0;
  int64_t sequence = 0;
  int64_t input_hidden = 0;
  int64_t num_heads = 0;
  int64_t q_hidden = 0;  // = k_hidden
  int64_t v_hidden = 0;
  int64_t qkv_hidden() const { return 2 * q_hidden + v_hidden; }
  int64_t qk_head_size() const { return q_hidden / num_heads; }
  int64_t v_head_size() const { return v_hidden / num_heads; }
};

enum class MaskForm { kNone, kLengths, kEndsAndStarts, kRaw2d, kRaw3d };

Status Refuse(const Node& node, const std::string& what) {
  return OpError(node, StatusCode::kUnsupported, "{} is not supported", what);
}

Status RefuseUnimplemented(const InferContext& ctx) {
  if (ctx.has_input(kPast)) return Refuse(ctx.node, "past state (input 4, past)");
  if (ctx.has_input(kAttentionBias)) {
    return Refuse(ctx.node, "attention_bias (input 5, the relative position bias)");
  }
  if (ctx.has_input(kPastSequenceLength)) return Refuse(ctx.node, "past_sequence_length (input 6)");
  if (ctx.node.outputs.size() > 1 && ctx.node.outputs[1] != kNoValue) {
    return Refuse(ctx.node, "present state (output 1, present)");
  }
  const Attributes& a = ctx.attributes();
  if (a.GetInt("do_rotary", 0) != 0) return Refuse(ctx.node, "do_rotary = 1 (rotary embedding)");
  if (a.GetInt("past_present_share_buffer", 0) != 0) {
    return Refuse(ctx.node, "past_present_share_buffer = 1");
  }
  const int64_t unidirectional = a.GetInt("unidirectional", 0);
  if (unidirectional != 0 && unidirectional != 1) {
    return OpError(ctx.node, StatusCode::kInvalidModel, "unidirectional is {}; it must be 0 or 1",
                   unidirectional);
  }
  return Status::Ok();
}

StatusOr<AttentionShape> ReadAttentionShape(const Node& node, const Shape& input,
                                            const Shape& weights, const Shape* bias) {
  AttentionShape s;
  if (input.size() != 3) {
    return OpError(node, StatusCode::kInvalidModel,
                   "input has shape {}; it must be (batch, sequence, hidden)",
                   ShapeToString(input));
  }
  s.batch = input[0];
  s.sequence = input[1];
  s.input_hidden = input[2];
  if (weights.size() != 2 || weights[0] != s.input_hidden) {
    return OpError(node, StatusCode::kInvalidModel,
                   "weights have shape {}; they must be ({}, Q + K + V hidden sizes)",
                   ShapeToString(weights), s.input_hidden);
  }
  s.num_heads = node.attributes.GetInt("num_heads", 0);
  if (s.num_heads <= 0) {
    return OpError(node, StatusCode::kInvalidModel, "num_heads is {}; it must be positive",
                   s.num_heads);
  }
  const std::vector<int64_t> sizes = node.attributes.GetInts("qkv_hidden_sizes", {});
  if (sizes.empty()) {
    if (weights[1] % 3 != 0) {
      return OpError(node, StatusCode::kInvalidModel,
                     "weights have {} columns, not 3 equal parts; qkv_hidden_sizes must say "
                     "how they split",
                     weights[1]);
    }
    s.q_hidden = s.v_hidden = weights[1] / 3;
  } else {
    if (sizes.size() != 3 || sizes[0] != sizes[1] || sizes[0] <= 0 || sizes[2] <= 0) {
      return OpError(node, StatusCode::kInvalidModel,
                     "qkv_hidden_sizes must be 3 positive values, Q's and K's equal");
    }
    s.q_hidden = sizes[0];
    s.v_hidden = sizes[2];
  }
  if (s.qkv_hidden() != weights[1]) {
    return OpError(node, StatusCode::kInvalidModel,
                   "weights have {} columns; the Q, K and V hidden sizes add up to {}", weights[1],
                   s.qkv_hidden());
  }
  if (s.q_hidden % s.num_heads != 0 || s.v_hidden % s.num_heads != 0) {
    return OpError(node, StatusCode::kInvalidModel,
                   "hidden sizes {} (Q, K) and {} (V) do not divide into {} heads", s.q_hidden,
                   s.v_hidden, s.num_heads);
  }
  if (bias != nullptr && *bias != Shape{s.qkv_hidden()}) {
    return OpError(node, StatusCode::kInvalidModel, "bias has shape {}, not ({})",
                   ShapeToString(*bias), s.qkv_hidden());
  }
  return s;
}

StatusOr<MaskForm> ReadMaskForm(const Node& node, const AttentionShape& s, const Shape* mask) {
  if (mask == nullptr) return MaskForm::kNone;
  const int64_t b = s.batch;
  const int64_t t = s.sequence;  // keys: no past state, so as many as queries
  if (*mask == Shape{b}) return MaskForm::kLengths;
  if (*mask == Shape{2 * b}) return MaskForm::kEndsAndStarts;
  if (*mask == Shape{b, t}) return MaskForm::kRaw2d;
  if (*mask == Shape{b, s.sequence, t}) return MaskForm::kRaw3d;
  if (mask->size() == 4) return Refuse(node, "the 4-D mask_index (batch, 1, max, max)");
  if (*mask == Shape{3 * b + 2}) return Refuse(node, "mask_index of shape (3 * batch + 2)");
  return OpError(node, StatusCode::kInvalidModel,
                 "mask_index has shape {}; it must be ({}), ({}), ({}, {}) or ({}, {}, {})",
                 ShapeToString(*mask), b, 2 * b, b, t, b, s.sequence, t);
}

Status InferAttention(InferContext& ctx) {
  COLLAGE_RETURN_IF_ERROR(RefuseUnimplemented(ctx));
  COLLAGE_RETURN_IF_ERROR(RequireDType(ctx, kInput, {DType::kFloat32}));
  COLLAGE_RETURN_IF_ERROR(RequireSameDType(ctx, kInput, kWeights));
  const Shape* bias = nullptr;
  if (ctx.has_input(kBias)) {
    COLLAGE_RETURN_IF_ERROR(RequireSameDType(ctx, kInput, kBias));
    bias = &ctx.input_type(kBias).shape;
  }
  COLLAGE_ASSIGN_OR_RETURN(const AttentionShape s,
                           ReadAttentionShape(ctx.node, ctx.input_type(kInput).shape,
                                              ctx.input_type(kWeights).shape, bias));
  const Shape* mask = nullptr;
  if (ctx.has_input(kMaskIndex)) {
    COLLAGE_RETURN_IF_ERROR(RequireDType(ctx, kMaskIndex, {DType::kInt32}));
    mask = &ctx.input_type(kMaskIndex).shape;
  }
  COLLAGE_RETURN_IF_ERROR(ReadMaskForm(ctx.node, s, mask).status());
  ctx.output_types[0] = TensorType{DType::kFloat32, {s.batch, s.sequence, s.v_hidden}};
  return Status::Ok();
}

// The additive mask of one batch row: (S, T) values, 0 or mask_filter_value (or their sum
// where the causal mask adds to a masked key, as ONNX Runtime adds them).
std::vector<float> AdditiveMask(const KernelContext& ctx, const AttentionShape& s, MaskForm form,
                                int64_t b) {
  const int64_t rows = s.sequence;
  const int64_t keys = s.sequence;
  const float filter = ctx.attributes().GetFloat("mask_filter_value", kDefaultMaskFilterValue);
  std::vector<float> mask(static_cast<size_t>(rows * keys), 0.0f);
  const int32_t* index =
      form == MaskForm::kNone ? nullptr : ctx.inputs[kMaskIndex].data_as<int32_t>();
  auto clamp_to_keys = [&](int32_t v) { return std::clamp<int64_t>(v, 0, keys); };
  for (int64_t i = 0; i < rows; ++i) {
    float* row = mask.data() + i * keys;
    switch (form) {
      case MaskForm::kNone: break;
      case MaskForm::kLengths:
        for (int64_t k = clamp_to_keys(index[b]); k < keys; ++k) row[k] = filter;
        break;
      case MaskForm::kEndsAndStarts: {
        const int64_t end = clamp_to_keys(index[b]);
        const int64_t start = clamp_to_keys(index[s.batch + b]);
        for (int64_t k = 0; k < keys; ++k) row[k] = (k < start || k >= end) ? filter : 0.0f;
        break;
      }
      case MaskForm::kRaw2d:
        for (int64_t k = 0; k < keys; ++k) row[k] = index[b * keys + k] > 0 ? 0.0f : filter;
        break;
      case MaskForm::kRaw3d:
        for (int64_t k = 0; k < keys; ++k) {
          row[k] = index[(b * rows + i) * keys + k] > 0 ? 0.0f : filter;
        }
        break;
    }
    if (ctx.attributes().GetInt("unidirectional", 0) != 0) {
      for (int64_t k = i + 1; k < keys; ++k) row[k] += filter;
    }
  }
  return mask;
}

// Softmax of one row of scores, in place (exp of the row less its maximum).
void SoftmaxRow(float* row, int64_t n) {
  const float max = *std::max_element(row, row + n);
  double sum = 0;
  for (int64_t k = 0; k < n; ++k) {
    row[k] = std::exp(row[k] - max);
    sum += row[k];
  }
  const auto inv = static_cast<float>(1.0 / sum);
  for (int64_t k = 0; k < n; ++k) row[k] *= inv;
}

Status RunAttention(KernelContext& ctx) {
  const Tensor& input = ctx.inputs[kInput];
  const Tensor& weights = ctx.inputs[kWeights];
  const bool has_bias = ctx.has_input(kBias);
  const Shape* bias_shape = has_bias ? &ctx.inputs[kBias].shape() : nullptr;
  COLLAGE_ASSIGN_OR_RETURN(const AttentionShape s, ReadAttentionShape(ctx.node, input.shape(),
                                                                      weights.shape(), bias_shape));
  const Shape* mask_shape = ctx.has_input(kMaskIndex) ? &ctx.inputs[kMaskIndex].shape() : nullptr;
  COLLAGE_ASSIGN_OR_RETURN(const MaskForm form, ReadMaskForm(ctx.node, s, mask_shape));
  const int64_t tokens = s.batch * s.sequence;
  const int64_t width = s.qkv_hidden();
  if (tokens == 0) return Status::Ok();

  // The packed projection: (tokens, Hq + Hk + Hv), bias added per column.
  std::vector<float> qkv(static_cast<size_t>(tokens * width));
  Sgemm(false, false, tokens, width, s.input_hidden, 1.0f, input.data_as<float>(), s.input_hidden,
        weights.data_as<float>(), width, 0.0f, qkv.data(), width);
  if (has_bias) {
    const float* bias = ctx.inputs[kBias].data_as<float>();
    for (int64_t t = 0; t < tokens; ++t) {
      for (int64_t j = 0; j < width; ++j) qkv[static_cast<size_t>(t * width + j)] += bias[j];
    }
  }

  const float default_scale = 1.0f / std::sqrt(static_cast<float>(s.qk_head_size()));
  const float given_scale = ctx.attributes().GetFloat("scale", 0.0f);
  const float scale = given_scale != 0.0f ? given_scale : default_scale;
  std::vector<std::vector<float>> masks;
  for (int64_t b = 0; b < s.batch; ++b) masks.push_back(AdditiveMask(ctx, s, form, b));

  float* out = ctx.outputs[0].data_as<float>();
  const int64_t seq = s.sequence;
  ParallelFor(s.batch * s.num_heads, 4 * seq * seq * (s.qk_head_size() + s.v_head_size()),
              [&](int64_t begin, int64_t end) {
                std::vector<float> scores(static_cast<size_t>(seq * seq));
                for (int64_t bh = begin; bh < end; ++bh) {
                  const int64_t b = bh / s.num_heads;
                  const int64_t h = bh % s.num_heads;
                  const float* rows = qkv.data() + b * seq * width;
                  const float* q = rows + h * s.qk_head_size();
                  const float* k = rows + s.q_hidden + h * s.qk_head_size();
                  const float* v = rows + 2 * s.q_hidden + h * s.v_head_size();
                  // scores = mask + scale * Q K^T, the mask added in float as ONNX Runtime's GEMM
                  // adds it.
                  std::copy(masks[static_cast<size_t>(b)].begin(),
                            masks[static_cast<size_t>(b)].end(), scores.begin());
                  Sgemm(false, true, seq, seq, s.qk_head_size(), scale, q, width, k, width, 1.0f,
                        scores.data(), seq);
                  for (int64_t i = 0; i < seq; ++i) SoftmaxRow(scores.data() + i * seq, seq);
                  Sgemm(false, false, seq, s.v_head_size(), seq, 1.0f, scores.data(), seq, v, width,
                        0.0f, out + b * seq * s.v_hidden + h * s.v_head_size(), s.v_hidden);
                }
              });
  return Status::Ok();
}

}  // namespace

void RegisterAttentionOps(OpRegistry& registry) {
  registry.Register(OpDef{"Attention", kMicrosoftDomain, OpKind::kOpaque, 2, 7, 1, 2,
                          InferAttention, RunAttention});
}

}  // namespace collage
