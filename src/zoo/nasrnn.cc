// A NAS-RNN: the recurrent cell found by neural architecture search (Zoph & Le, "Neural
// Architecture Search with Reinforcement Learning"), in the form graph optimizers benchmark
// it: per step eight linear maps of the input and eight of the hidden state, combined by a
// tree of Relu/Sigmoid/Tanh, Add and Mul. Unrolled over a sequence of 8 steps, hidden size
// 512, as a traced export writes it: x[:, t] as Gather, the weights shared by every step.
// The hidden state starts at zero, so step 0 has no hidden-state terms (what the exporter's
// constant folding leaves).
#include <array>
#include <cmath>
#include <string>

#include "ops/graph_builder.h"
#include "zoo/models.h"

namespace collage {

namespace {

constexpr int64_t kSteps = 8;
constexpr int64_t kHidden = 512;
constexpr int kBranches = 8;

struct CellWeights {
  std::array<ValueId, kBranches> input;   // W_i [hidden, hidden]
  std::array<ValueId, kBranches> hidden;  // U_i [hidden, hidden]
};

ValueId Act(GraphBuilder& b, const char* op, ValueId x) { return b.Node(op, {x}); }

ValueId NasCell(GraphBuilder& b, const CellWeights& w, ValueId x, ValueId h) {
  std::array<ValueId, kBranches> a;
  for (int i = 0; i < kBranches; ++i) {
    auto scope = b.Scope("branch" + std::to_string(i));
    a[i] = b.Node("MatMul", {x, w.input[i]});
    if (h != kNoValue) a[i] = b.Node("Add", {a[i], b.Node("MatMul", {h, w.hidden[i]})});
  }
  ValueId m0 = b.Node("Add", {Act(b, "Relu", a[0]), Act(b, "Sigmoid", a[3])});
  ValueId m1 = b.Node("Add", {Act(b, "Sigmoid", a[1]), Act(b, "Tanh", a[2])});
  ValueId m2 = b.Node("Mul", {Act(b, "Sigmoid", a[4]), Act(b, "Tanh", a[5])});
  ValueId m3 = b.Node("Mul", {Act(b, "Sigmoid", a[6]), Act(b, "Relu", a[7])});
  ValueId m4 = b.Node("Add", {Act(b, "Sigmoid", m1), Act(b, "Tanh", m2)});
  ValueId m5 = b.Node("Mul", {Act(b, "Tanh", m0), Act(b, "Tanh", m3)});
  ValueId m6 = b.Node("Mul", {Act(b, "Tanh", m4), Act(b, "Tanh", m5)});
  return Act(b, "Tanh", m6);
}

}  // namespace

StatusOr<Graph> BuildNasRnn() {
  GraphBuilder b("nasrnn", /*opset=*/17, /*seed=*/512);
  ValueId input = b.Input("input", DType::kFloat32, {1, kSteps, kHidden});
  // Xavier scale: each pre-activation is a sum of two unit-scale maps.
  const float stddev = 1.0f / std::sqrt(static_cast<float>(2 * kHidden));
  CellWeights w;
  for (int i = 0; i < kBranches; ++i) {
    w.input[i] = b.RandomNormal("cell.w" + std::to_string(i), {kHidden, kHidden}, stddev);
    w.hidden[i] = b.RandomNormal("cell.u" + std::to_string(i), {kHidden, kHidden}, stddev);
  }
  ValueId h = kNoValue;
  for (int64_t t = 0; t < kSteps; ++t) {
    auto scope = b.Scope("step" + std::to_string(t));
    ValueId x = b.Node("Gather", {input, b.Scalar<int64_t>("index", t)}, {{"axis", 1}}, "x");
    h = NasCell(b, w, x, h);
  }
  b.Output(h, "hidden");
  return std::move(b).Build();
}

}  // namespace collage
