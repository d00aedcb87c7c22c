// com.microsoft EmbedLayerNormalization: BERT's embedding layer as ONNX Runtime's transformer
// optimizer fuses it. Per the contrib op spec, for each token (b, s):
//   sum = word_embedding[input_ids] + position_embedding[position] (+
//   segment_embedding[segment_ids]) output = LayerNorm(sum) * gamma + beta epsilon 1e-12 by default
// position is position_ids[b, s] (position_ids (batch, sequence) or (1, sequence)), else s.
// Inputs: input_ids, segment_ids?, word_embedding, position_embedding, segment_embedding?,
// gamma, beta, mask?, position_ids? (ids int32). Outputs: output (batch, sequence, hidden);
// mask_index (batch) int32, the number of mask values equal to 1 per row (0 without a mask,
// as ONNX Runtime gives); embedding_sum, the sum before normalization.
// An id outside its table is an error naming the node, never a read out of bounds.
#include <algorithm>
#include <string>
#include <vector>

#include "ops/elementwise.h"
#include "ops/op_helpers.h"
#include "ops/row_normalize.h"

namespace collage {
namespace {

constexpr char kMicrosoftDomain[] = "com.microsoft";
constexpr float kDefaultEpsilon = 1e-12f;

enum Input : size_t {
  kInputIds = 0,
  kSegmentIds = 1,
  kWordEmbedding = 2,
  kPositionEmbedding = 3,
  kSegmentEmbedding = 4,
  kGamma = 5,
  kBeta = 6,
  kMask = 7,
  kPositionIds = 8,
};

Status RequireShape(const InferContext& ctx, size_t input, const char* name, const Shape& shape) {
  if (ctx.input_type(input).shape == shape) return Status::Ok();
  return OpError(ctx.node, StatusCode::kInvalidModel, "{} (input {}) has shape {}, not {}", name,
                 input, ShapeToString(ctx.input_type(input).shape), ShapeToString(shape));
}

Status RequireTable(const InferContext& ctx, size_t input, const char* name, int64_t hidden) {
  const Shape& s = ctx.input_type(input).shape;
  if (s.size() == 2 && s[1] == hidden) return Status::Ok();
  return OpError(ctx.node, StatusCode::kInvalidModel,
                 "{} (input {}) has shape {}; it must be (rows, {})", name, input, ShapeToString(s),
                 hidden);
}

Status InferEmbedLayerNorm(InferContext& ctx) {
  for (size_t i : {kInputIds, kSegmentIds, kMask, kPositionIds}) {
    if (ctx.has_input(i)) COLLAGE_RETURN_IF_ERROR(RequireDType(ctx, i, {DType::kInt32}));
  }
  for (size_t i : {kWordEmbedding, kPositionEmbedding, kSegmentEmbedding, kGamma, kBeta}) {
    if (!ctx.has_input(i)) continue;
    COLLAGE_RETURN_IF_ERROR(RequireDType(ctx, i, {DType::kFloat32}));
  }
  for (size_t i : {kInputIds, kWordEmbedding, kPositionEmbedding, kGamma, kBeta}) {
    if (!ctx.has_input(i)) {
      return OpError(ctx.node, StatusCode::kInvalidModel, "input {} is required but missing", i);
    }
  }
  if (ctx.has_input(kSegmentIds) != ctx.has_input(kSegmentEmbedding)) {
    return OpError(ctx.node, StatusCode::kInvalidModel,
                   "segment_ids (input 1) and segment_embedding (input 4) must be given together");
  }
  const Shape& ids = ctx.input_type(kInputIds).shape;
  if (ids.size() != 2) {
    return OpError(ctx.node, StatusCode::kInvalidModel,
                   "input_ids has shape {}; it must be (batch, sequence)", ShapeToString(ids));
  }
  const Shape& word = ctx.input_type(kWordEmbedding).shape;
  if (word.size() != 2) {
    return OpError(ctx.node, StatusCode::kInvalidModel,
                   "word_embedding has shape {}; it must be (vocabulary, hidden)",
                   ShapeToString(word));
  }
  const int64_t hidden = word[1];
  COLLAGE_RETURN_IF_ERROR(RequireTable(ctx, kPositionEmbedding, "position_embedding", hidden));
  if (ctx.has_input(kSegmentIds)) {
    COLLAGE_RETURN_IF_ERROR(RequireShape(ctx, kSegmentIds, "segment_ids", ids));
    COLLAGE_RETURN_IF_ERROR(RequireTable(ctx, kSegmentEmbedding, "segment_embedding", hidden));
  }
  COLLAGE_RETURN_IF_ERROR(RequireShape(ctx, kGamma, "gamma", {hidden}));
  COLLAGE_RETURN_IF_ERROR(RequireShape(ctx, kBeta, "beta", {hidden}));
  if (ctx.has_input(kMask)) COLLAGE_RETURN_IF_ERROR(RequireShape(ctx, kMask, "mask", ids));
  if (ctx.has_input(kPositionIds)) {
    const Shape& p = ctx.input_type(kPositionIds).shape;
    if (p != ids && p != Shape{1, ids[1]}) {
      return OpError(ctx.node, StatusCode::kInvalidModel,
                     "position_ids has shape {}; it must be {} or (1, {})", ShapeToString(p),
                     ShapeToString(ids), ids[1]);
    }
  } else if (ids[1] > ctx.input_type(kPositionEmbedding).shape[0]) {
    return OpError(ctx.node, StatusCode::kInvalidModel,
                   "the sequence ({}) is longer than position_embedding's {} rows", ids[1],
                   ctx.input_type(kPositionEmbedding).shape[0]);
  }
  const TensorType embedded{DType::kFloat32, {ids[0], ids[1], hidden}};
  ctx.output_types[0] = embedded;
  if (ctx.output_types.size() > 1) ctx.output_types[1] = TensorType{DType::kInt32, {ids[0]}};
  if (ctx.output_types.size() > 2) ctx.output_types[2] = embedded;
  return Status::Ok();
}

// Row `id` of `table` (rows x hidden), or an error naming the node when it has no such row.
StatusOr<const float*> TableRow(const KernelContext& ctx, size_t input, const char* ids,
                                int32_t id) {
  const Tensor& table = ctx.inputs[input];
  if (id < 0 || id >= table.dim(0)) {
    return OpError(ctx.node, StatusCode::kInvalidArgument,
                   "{} holds {}, outside the {} rows of its embedding (input {})", ids, id,
                   table.dim(0), input);
  }
  return table.data_as<float>() + static_cast<int64_t>(id) * table.dim(1);
}

Status RunEmbedLayerNorm(KernelContext& ctx) {
  const Tensor& ids = ctx.inputs[kInputIds];
  const int64_t batch = ids.dim(0);
  const int64_t sequence = ids.dim(1);
  const int64_t hidden = ctx.inputs[kWordEmbedding].dim(1);
  const int32_t* input_ids = ids.data_as<int32_t>();
  const bool has_segment = ctx.has_input(kSegmentIds);
  const int32_t* segment_ids = has_segment ? ctx.inputs[kSegmentIds].data_as<int32_t>() : nullptr;
  const bool has_positions = ctx.has_input(kPositionIds);
  const int32_t* position_ids =
      has_positions ? ctx.inputs[kPositionIds].data_as<int32_t>() : nullptr;
  const bool positions_per_batch = has_positions && ctx.inputs[kPositionIds].dim(0) == batch;
  const float* gamma = ctx.inputs[kGamma].data_as<float>();
  const float* beta = ctx.inputs[kBeta].data_as<float>();
  const float epsilon = ctx.attributes().GetFloat("epsilon", kDefaultEpsilon);
  float* out = ctx.outputs[0].data_as<float>();
  float* sum_out =
      ctx.outputs.size() > 2 && !ctx.outputs[2].empty() ? ctx.outputs[2].data_as<float>() : nullptr;
  std::vector<float> sum(static_cast<size_t>(hidden));
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t s = 0; s < sequence; ++s) {
      const int64_t token = b * sequence + s;
      COLLAGE_ASSIGN_OR_RETURN(const float* word,
                               TableRow(ctx, kWordEmbedding, "input_ids", input_ids[token]));
      const int32_t position =
          has_positions ? position_ids[positions_per_batch ? token : s] : static_cast<int32_t>(s);
      COLLAGE_ASSIGN_OR_RETURN(const float* pos,
                               TableRow(ctx, kPositionEmbedding,
                                        has_positions ? "position_ids" : "the position", position));
      const float* segment = nullptr;
      if (has_segment) {
        COLLAGE_ASSIGN_OR_RETURN(
            segment, TableRow(ctx, kSegmentEmbedding, "segment_ids", segment_ids[token]));
      }
      // The sum in float, as the embedding_sum output holds it.
      for (int64_t j = 0; j < hidden; ++j) {
        float v = word[j] + pos[j];
        if (segment != nullptr) v += segment[j];
        sum[static_cast<size_t>(j)] = v;
      }
      if (sum_out != nullptr) std::copy(sum.begin(), sum.end(), sum_out + token * hidden);
      NormalizeRow(RowNorm::kLayer, sum.data(), hidden, epsilon, gamma, beta, out + token * hidden);
    }
  }
  if (ctx.outputs.size() > 1 && !ctx.outputs[1].empty()) {
    int32_t* mask_index = ctx.outputs[1].data_as<int32_t>();
    const int32_t* mask = ctx.has_input(kMask) ? ctx.inputs[kMask].data_as<int32_t>() : nullptr;
    for (int64_t b = 0; b < batch; ++b) {
      int32_t ones = 0;
      for (int64_t s = 0; mask != nullptr && s < sequence; ++s) ones += mask[b * sequence + s] == 1;
      mask_index[b] = ones;
    }
  }
  return Status::Ok();
}

}  // namespace

void RegisterEmbedLayerNormOps(OpRegistry& registry) {
  // Required inputs follow the optional segment_ids: min_inputs 1, and inference names a
  // missing required one.
  registry.Register(OpDef{"EmbedLayerNormalization", kMicrosoftDomain, OpKind::kOpaque, 1, 9, 1, 3,
                          InferEmbedLayerNorm, RunEmbedLayerNorm});
}

}  // namespace collage
