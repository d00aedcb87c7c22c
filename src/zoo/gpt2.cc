// GPT-2 small (12 blocks, hidden 768, 12 heads, GELU in its tanh form) at batch 1 and
// sequence 128, as Hugging Face's GPT2Model exports at opset 17 without fusions: token and
// position embeddings, pre-LayerNorm blocks of causal self-attention and MLP, a final
// LayerNorm. The linears are GPT-2's Conv1D (addmm over the flattened tokens: Reshape, Gemm
// with W[in, out], Reshape), Q/K/V come out of one Gemm by Split, and causality is a Where
// over a constant lower-triangular mask that puts float32's lowest value where a position
// would see a later one.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ops/graph_builder.h"
#include "zoo/layers.h"
#include "zoo/models.h"

namespace collage {

namespace {

constexpr int64_t kVocab = 50257;
constexpr int64_t kSeq = 128;
constexpr int64_t kHidden = 768;
constexpr int64_t kHeads = 12;
constexpr int64_t kHeadDim = kHidden / kHeads;
constexpr int kLayers = 12;
constexpr float kInitStddev = 0.02f;
constexpr float kLayerNormEpsilon = 1e-5f;

// Constants every block shares.
struct Shared {
  ValueId tokens_shape;  // [128, -1]: flattens [1, 128, n] for the Gemm
  ValueId heads_shape;   // [1, 128, 12, 64]
  ValueId hidden_shape;  // [1, 128, 768]
  ValueId split_sizes;   // [768, 768, 768]
  ValueId scale;         // sqrt(head_dim)
  ValueId causal;        // bool [1, 1, 128, 128], true on and below the diagonal
  ValueId masked;        // float32 lowest
  ValueId gelu_cube;     // 0.044715
  ValueId gelu_scale;    // sqrt(2 / pi)
  ValueId three;
  ValueId one;
  ValueId half;
};
// GPT-2's Conv1D on [1, 128, in]: Reshape to [128, in], Gemm with W [in, out] and bias,
// Reshape back to [1, 128, out].
ValueId Conv1D(GraphBuilder& b, const Shared& c, ValueId x, const std::string& name,
               int64_t out_features, float stddev) {
  auto scope = b.Scope(name);
  const int64_t in_features = b.dim(x, -1);
  ValueId w = b.RandomNormal("weight", {in_features, out_features}, stddev);
  ValueId bias = b.RandomNormal("bias", {out_features}, 0.02f);
  ValueId flat = b.Node("Reshape", {x, c.tokens_shape}, {}, "flatten");
  ValueId y = b.Node("Gemm", {flat, w, bias}, {{"alpha", 1.0f}, {"beta", 1.0f}}, "addmm");
  ValueId shape = b.Ints("shape", {1, kSeq, out_features});
  return b.Node("Reshape", {y, shape}, {}, "unflatten");
}

ValueId CausalSelfAttention(GraphBuilder& b, const Shared& c, ValueId x) {
  auto scope = b.Scope("attn");
  ValueId qkv = Conv1D(b, c, x, "c_attn", 3 * kHidden, kInitStddev);
  std::vector<ValueId> parts =
      b.NodeMulti("Split", {qkv, c.split_sizes}, 3, {{"axis", 2}}, "split");
  if (parts.size() != 3) return kNoValue;
  auto heads = [&](ValueId v, const std::string& name, std::initializer_list<int64_t> perm) {
    ValueId y = b.Node("Reshape", {v, c.heads_shape}, {}, name + ".reshape");
    return b.Node("Transpose", {y}, {{"perm", perm}}, name + ".transpose");
  };
  ValueId q = heads(parts[0], "query", {0, 2, 1, 3});
  ValueId k = heads(parts[1], "key", {0, 2, 3, 1});
  ValueId v = heads(parts[2], "value", {0, 2, 1, 3});
  ValueId scores = b.Node("MatMul", {q, k}, {}, "scores");
  scores = b.Node("Div", {scores, c.scale}, {}, "scaled_scores");
  scores = b.Node("Where", {c.causal, scores, c.masked}, {}, "causal_scores");
  ValueId probs = b.Node("Softmax", {scores}, {{"axis", -1}}, "probs");
  ValueId context = b.Node("MatMul", {probs, v}, {}, "context");
  context = b.Node("Transpose", {context}, {{"perm", {0, 2, 1, 3}}}, "merge_heads");
  context = b.Node("Reshape", {context, c.hidden_shape}, {}, "merge_heads.reshape");
  // GPT-2 scales the residual projections by 1/sqrt(2 * layers) at initialization.
  return Conv1D(b, c, context, "c_proj", kHidden, kInitStddev / std::sqrt(2.0f * kLayers));
}

// gelu_new: 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))), node for node.
ValueId GeluTanh(GraphBuilder& b, const Shared& c, ValueId x) {
  auto scope = b.Scope("gelu");
  ValueId cube = b.Node("Pow", {x, c.three});
  ValueId inner = b.Node("Add", {x, b.Node("Mul", {cube, c.gelu_cube})});
  ValueId t = b.Node("Tanh", {b.Node("Mul", {inner, c.gelu_scale})});
  ValueId y = b.Node("Mul", {b.Node("Mul", {x, c.half}), b.Node("Add", {t, c.one})});
  return y;
}

ValueId Block(GraphBuilder& b, const Shared& c, ValueId x) {
  ValueId attention = CausalSelfAttention(b, c, zoo::LayerNorm(b, x, "ln_1", kLayerNormEpsilon));
  x = b.Node("Add", {x, attention}, {}, "attn_residual");
  ValueId h;
  {
    auto scope = b.Scope("mlp");
    h = Conv1D(b, c, zoo::LayerNorm(b, x, "ln_2", kLayerNormEpsilon), "c_fc", 4 * kHidden,
               kInitStddev);
    h = GeluTanh(b, c, h);
    h = Conv1D(b, c, h, "c_proj", kHidden, kInitStddev / std::sqrt(2.0f * kLayers));
  }
  return b.Node("Add", {x, h}, {}, "mlp_residual");
}

}  // namespace

StatusOr<Graph> BuildGpt2Small() {
  GraphBuilder b("gpt2", /*opset=*/17, /*seed=*/124);
  ValueId ids = b.Input("input_ids", DType::kInt64, {1, kSeq});

  Shared c;
  c.tokens_shape = b.Ints("shape.tokens", {kSeq, -1});
  c.heads_shape = b.Ints("shape.heads", {1, kSeq, kHeads, kHeadDim});
  c.hidden_shape = b.Ints("shape.hidden", {1, kSeq, kHidden});
  c.split_sizes = b.Ints("split.sizes", {kHidden, kHidden, kHidden});
  c.scale = b.Scalar<float>("attn.scale", std::sqrt(static_cast<float>(kHeadDim)));
  std::vector<bool> lower(kSeq * kSeq);
  for (int64_t i = 0; i < kSeq; ++i) {
    for (int64_t j = 0; j < kSeq; ++j) lower[static_cast<size_t>(i * kSeq + j)] = j <= i;
  }
  c.causal = b.Constant("attn.bias", Tensor::FromVector<bool>({1, 1, kSeq, kSeq}, lower));
  c.masked = b.Scalar<float>("attn.masked_bias", std::numeric_limits<float>::lowest());
  c.gelu_cube = b.Scalar<float>("gelu.cube", 0.044715f);
  c.gelu_scale = b.Scalar<float>("gelu.scale", std::sqrt(2.0f / 3.14159265358979f));
  c.three = b.Scalar<float>("gelu.three", 3.0f);
  c.one = b.Scalar<float>("gelu.one", 1.0f);
  c.half = b.Scalar<float>("gelu.half", 0.5f);

  ValueId x;
  {
    ValueId wte = b.RandomNormal("wte.weight", {kVocab, kHidden}, kInitStddev);
    x = b.Node("Gather", {wte, ids}, {{"axis", 0}}, "wte");
    // Positions are 0..127 at batch 1: the exporter folds wpe(arange) into a constant.
    ValueId wpe = b.RandomNormal("wpe", {kSeq, kHidden}, 0.01f);
    x = b.Node("Add", {x, wpe}, {}, "add_positions");
  }
  for (int i = 0; i < kLayers; ++i) {
    auto scope = b.Scope("h." + std::to_string(i));
    x = Block(b, c, x);
  }
  x = zoo::LayerNorm(b, x, "ln_f", kLayerNormEpsilon);
  b.Output(x, "last_hidden_state");
  return std::move(b).Build();
}

}  // namespace collage
