#include "ops/graph_builder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <variant>

#include "collage/sdk/op_registry.h"
#include "collage/sdk/errors.h"

namespace collage {
namespace {

// A private registry, so the builder's own logic is tested apart from the real ops:
//   Twice(x) -> x's type;  Split2(x) -> two halves of x along axis 0;
//   Reject(x) -> always an inference error.
OpRegistry ToyRegistry() {
  OpRegistry registry;
  OpDef twice;
  twice.op_type = "Twice";
  twice.kind = OpKind::kElementwise;
  twice.infer = [](InferContext& ctx) {
    ctx.output_types[0] = ctx.input_type(0);
    return Status::Ok();
  };
  twice.run = [](KernelContext&) { return Status::Ok(); };
  registry.Register(twice);

  OpDef split;
  split.op_type = "Split2";
  split.min_outputs = 2;
  split.max_outputs = 2;
  split.infer = [](InferContext& ctx) {
    TensorType half = ctx.input_type(0);
    if (half.shape.empty() || half.shape[0] % 2 != 0) {
      return OpError(ctx.node, StatusCode::kInvalidArgument, "axis 0 is not even");
    }
    half.shape[0] /= 2;
    ctx.output_types = {half, half};
    return Status::Ok();
  };
  split.run = [](KernelContext&) { return Status::Ok(); };
  registry.Register(split);

  OpDef reject;
  reject.op_type = "Reject";
  reject.infer = [](InferContext& ctx) {
    return OpError(ctx.node, StatusCode::kUnsupported, "rank {} is not supported",
                   ctx.input_type(0).shape.size());
  };
  reject.run = [](KernelContext&) { return Status::Ok(); };
  registry.Register(reject);

  // Reads an attribute and a constant input, to check both reach type inference.
  OpDef fill;
  fill.op_type = "FillLike";
  fill.min_inputs = 2;
  fill.max_inputs = 2;
  fill.infer = [](InferContext& ctx) {
    const Tensor* shape = ctx.input_value(1);
    if (shape == nullptr) {
      return OpError(ctx.node, StatusCode::kUnsupported, "shape input is not constant");
    }
    ctx.output_types[0] = TensorType{static_cast<DType>(ctx.attributes().GetInt("dtype", 1)),
                                     shape->ToVector<int64_t>()};
    return Status::Ok();
  };
  fill.run = [](KernelContext&) { return Status::Ok(); };
  registry.Register(fill);
  return registry;
}

const OpRegistry& Toy() {
  static const OpRegistry registry = ToyRegistry();
  return registry;
}

TEST(GraphBuilderTest, InfersTypesAndBuildsValidGraph) {
  GraphBuilder b("toy", 13, 0, &Toy());
  ValueId x = b.Input("x", DType::kFloat32, {4, 3});
  ValueId y = b.Node("Twice", {x});
  std::vector<ValueId> halves = b.NodeMulti("Split2", {y}, 2, {}, "split");
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(b.type(y), (TensorType{DType::kFloat32, {4, 3}}));
  ASSERT_EQ(halves.size(), 2u);
  EXPECT_EQ(b.shape(halves[1]), (Shape{2, 3}));
  b.Output(halves[0], "first");
  b.Output(halves[1]);

  StatusOr<Graph> built = std::move(b).Build();
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  const Graph& g = *built;
  EXPECT_TRUE(g.Validate().ok());
  EXPECT_EQ(g.name(), "toy");
  EXPECT_EQ(g.opset(), 13);
  ASSERT_EQ(g.num_nodes(), 2);
  EXPECT_EQ(g.node(0).name, "twice");
  EXPECT_EQ(g.node(1).name, "split");
  EXPECT_EQ(g.node(1).op_type, "Split2");
  ASSERT_EQ(g.inputs().size(), 1u);
  EXPECT_EQ(g.value(g.inputs()[0]).name, "x");
  ASSERT_EQ(g.outputs().size(), 2u);
  EXPECT_EQ(g.value(g.outputs()[0]).name, "first");
  EXPECT_EQ(g.value(g.outputs()[1]).name, "split:1");
  // The renamed output is findable under its new name, its old name is gone.
  EXPECT_EQ(g.FindValue("first"), std::optional<ValueId>(g.outputs()[0]));
  EXPECT_FALSE(g.FindValue("split:0").has_value());
  EXPECT_EQ(g.value(g.outputs()[0]).producer, 1);
}

TEST(GraphBuilderTest, DefaultOpsetIs17) {
  GraphBuilder b;
  EXPECT_EQ(b.graph().opset(), 17);
}

TEST(GraphBuilderTest, ScopesMakeReadableUniqueNames) {
  GraphBuilder b("names", 17, 0, &Toy());
  ValueId x = b.Input("x", DType::kFloat32, {2});
  ValueId a, c, d, w;
  {
    auto outer = b.Scope("layer1");
    auto inner = b.Scope("0");
    w = b.Constant<float>("conv1.weight", {2}, {1.0f, 2.0f});
    a = b.Node("Twice", {x}, {}, "conv1");
    c = b.Node("Twice", {a});
    d = b.Node("Twice", {c});
  }
  ValueId e = b.Node("Twice", {d}, {}, "layer1.0.conv1");  // clashes with the first
  b.Output(e);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  const Graph& g = b.graph();
  EXPECT_EQ(g.value(w).name, "layer1.0.conv1.weight");
  EXPECT_EQ(g.node(0).name, "layer1.0.conv1");
  EXPECT_EQ(g.value(a).name, "layer1.0.conv1");
  EXPECT_EQ(g.node(1).name, "layer1.0.twice");
  EXPECT_EQ(g.node(2).name, "layer1.0.twice_1");
  EXPECT_EQ(g.node(3).name, "layer1.0.conv1_1");
  // Every value name is distinct.
  for (ValueId i = 0; i < g.num_values(); ++i) {
    for (ValueId j = i + 1; j < g.num_values(); ++j) {
      EXPECT_NE(g.value(i).name, g.value(j).name);
    }
  }
}

TEST(GraphBuilderTest, AttributesConvertFromLiterals) {
  GraphBuilder b("attrs", 17, 0, &Toy());
  ValueId x = b.Input("x", DType::kFloat32, {2});
  b.Node("Twice", {x},
         {{"axis", 1},
          {"axes", {1}},
          {"pads", {1, 1, 0, 0}},
          {"count", int64_t{7}},
          {"epsilon", 1e-5f},
          {"alpha", 0.25},
          {"mode", "constant"},
          {"scales", std::vector<float>{1.5f, 2.0f}}});
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  const Attributes& attrs = b.graph().node(0).attributes;
  ASSERT_TRUE(std::holds_alternative<int64_t>(*attrs.Find("axis")));
  EXPECT_EQ(attrs.GetInt("axis", 0), 1);
  // A one-element braced list is a list, not a scalar.
  ASSERT_TRUE(std::holds_alternative<std::vector<int64_t>>(*attrs.Find("axes")));
  EXPECT_EQ(attrs.GetInts("axes"), (std::vector<int64_t>{1}));
  EXPECT_EQ(attrs.GetInts("pads"), (std::vector<int64_t>{1, 1, 0, 0}));
  EXPECT_EQ(attrs.GetInt("count", 0), 7);
  ASSERT_TRUE(std::holds_alternative<float>(*attrs.Find("epsilon")));
  EXPECT_FLOAT_EQ(attrs.GetFloat("epsilon", 0), 1e-5f);
  ASSERT_TRUE(std::holds_alternative<float>(*attrs.Find("alpha")));
  EXPECT_FLOAT_EQ(attrs.GetFloat("alpha", 0), 0.25f);
  EXPECT_EQ(attrs.GetString("mode", ""), "constant");
  EXPECT_EQ(attrs.GetFloats("scales"), (std::vector<float>{1.5f, 2.0f}));
}

TEST(GraphBuilderTest, ConstantInputsAndAttributesReachInference) {
  GraphBuilder b("fill", 17, 0, &Toy());
  ValueId x = b.Input("x", DType::kFloat32, {2});
  ValueId shape = b.Ints("shape", {3, 5});
  ValueId y = b.Node("FillLike", {x, shape}, {{"dtype", static_cast<int>(DType::kInt64)}});
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(b.type(y), (TensorType{DType::kInt64, {3, 5}}));

  // A non-constant shape input fails inference, and the error names the node.
  ValueId z = b.Node("FillLike", {x, x}, {}, "fill2");
  EXPECT_EQ(z, kNoValue);
  EXPECT_EQ(b.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(b.status().message().find("fill2"), std::string::npos) << b.status().message();
}

TEST(GraphBuilderTest, ErrorsAreStickyAndReturnedByBuild) {
  GraphBuilder b("errors", 17, 0, &Toy());
  ValueId x = b.Input("x", DType::kFloat32, {2, 2});
  ValueId y = b.Node("Reject", {x}, {}, "bad");
  EXPECT_EQ(y, kNoValue);
  EXPECT_FALSE(b.ok());
  const Status first = b.status();
  EXPECT_EQ(first.code(), StatusCode::kUnsupported);
  EXPECT_NE(first.message().find("Reject node 'bad'"), std::string::npos) << first.message();
  EXPECT_NE(first.message().find("rank 2"), std::string::npos) << first.message();
  // Later calls are no-ops and keep the first error.
  EXPECT_EQ(b.Node("Twice", {x}), kNoValue);
  EXPECT_EQ(b.NodeMulti("Split2", {x}, 2), (std::vector<ValueId>{kNoValue, kNoValue}));
  EXPECT_EQ(b.RandomNormal("w", {4}, 1.0f), kNoValue);
  b.Output(x);
  StatusOr<Graph> built = std::move(b).Build();
  ASSERT_FALSE(built.ok());
  EXPECT_EQ(built.status().message(), first.message());
}

TEST(GraphBuilderTest, RefusesUnknownOpsBadArityAndBadIds) {
  {
    GraphBuilder b("unknown", 17, 0, &Toy());
    ValueId x = b.Input("x", DType::kFloat32, {2});
    b.Node("NoSuchOp", {x});
    EXPECT_EQ(b.status().code(), StatusCode::kUnsupported);
    EXPECT_NE(b.status().message().find("NoSuchOp"), std::string::npos);
  }
  {
    GraphBuilder b("arity", 17, 0, &Toy());
    ValueId x = b.Input("x", DType::kFloat32, {2});
    b.Node("Twice", {x, x});
    EXPECT_EQ(b.status().code(), StatusCode::kInvalidModel) << b.status().ToString();
  }
  {
    GraphBuilder b("outputs", 17, 0, &Toy());
    ValueId x = b.Input("x", DType::kFloat32, {2});
    b.Node("Split2", {x});  // Split2 has two outputs
    EXPECT_EQ(b.status().code(), StatusCode::kInvalidModel) << b.status().ToString();
  }
  {
    GraphBuilder b("ids", 17, 0, &Toy());
    b.Input("x", DType::kFloat32, {2});
    b.Node("Twice", {42});
    EXPECT_EQ(b.status().code(), StatusCode::kInvalidArgument) << b.status().ToString();
  }
  {
    GraphBuilder b("input", 17, 0, &Toy());
    b.Input("x", DType::kFloat32, {2});
    b.Input("x", DType::kFloat32, {2});
    EXPECT_EQ(b.status().code(), StatusCode::kInvalidArgument);
  }
  {
    GraphBuilder b("dynamic", 17, 0, &Toy());
    b.Input("x", DType::kFloat32, {-1, 2});
    EXPECT_EQ(b.status().code(), StatusCode::kInvalidArgument);
  }
  {
    GraphBuilder b("count", 17, 0, &Toy());
    b.Constant<float>("c", {3}, {1.0f, 2.0f});
    EXPECT_EQ(b.status().code(), StatusCode::kInvalidArgument);
  }
}

TEST(GraphBuilderTest, OutputNamesMustBeFree) {
  GraphBuilder b("clash", 17, 0, &Toy());
  ValueId x = b.Input("x", DType::kFloat32, {2});
  ValueId y = b.Node("Twice", {x});
  b.Output(y, "x");
  EXPECT_EQ(b.status().code(), StatusCode::kInvalidArgument);

  GraphBuilder none("none", 17, 0, &Toy());
  none.Input("x", DType::kFloat32, {2});
  EXPECT_FALSE(std::move(none).Build().ok());  // no outputs
}

TEST(GraphBuilderTest, RandomConstantsAreDeterministicPerName) {
  auto make = [](uint64_t seed, const std::string& name) {
    GraphBuilder b("rng", 17, seed, &Toy());
    ValueId c = b.RandomNormal(name, {1000}, 1.0f);
    return b.graph().value(c).constant->ToVector<float>();
  };
  EXPECT_EQ(make(1, "w"), make(1, "w"));
  EXPECT_NE(make(1, "w"), make(2, "w"));
  EXPECT_NE(make(1, "w"), make(1, "v"));

  // Order of creation does not matter: "w" is the same whether made first or second.
  GraphBuilder b("rng", 17, 1, &Toy());
  b.RandomUniform("other", {77}, 0.0f, 1.0f);
  ValueId w = b.RandomNormal("w", {1000}, 1.0f);
  EXPECT_EQ(b.graph().value(w).constant->ToVector<float>(), make(1, "w"));
}

TEST(GraphBuilderTest, RandomNormalHasRequestedMoments) {
  GraphBuilder b("rng", 17, 3, &Toy());
  // Odd count and several chunks: exercises the chunk edges and the unpaired last element.
  ValueId c = b.RandomNormal("w", {1000001}, 0.5f, 2.0f);
  const Tensor& t = *b.graph().value(c).constant;
  EXPECT_EQ(t.dtype(), DType::kFloat32);
  EXPECT_EQ(t.shape(), (Shape{1000001}));
  const float* p = t.data_as<float>();
  double sum = 0, sq = 0;
  int64_t beyond3 = 0;
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    ASSERT_TRUE(std::isfinite(p[i]));
    sum += p[i];
    sq += static_cast<double>(p[i]) * p[i];
    if (std::abs(p[i] - 2.0f) > 1.5f) ++beyond3;
  }
  const double n = static_cast<double>(t.num_elements());
  const double mean = sum / n;
  const double stddev = std::sqrt(sq / n - mean * mean);
  EXPECT_NEAR(mean, 2.0, 0.005);
  EXPECT_NEAR(stddev, 0.5, 0.005);
  // A normal has 0.27% of its mass beyond 3 sigma.
  EXPECT_NEAR(static_cast<double>(beyond3) / n, 0.0027, 0.0005);
  EXPECT_NE(p[1000000], 0.0f);  // the unpaired last element is written
}

TEST(GraphBuilderTest, RandomUniformStaysInRange) {
  GraphBuilder b("rng", 17, 3, &Toy());
  ValueId c = b.RandomUniform("u", {100000}, -0.25f, 0.75f);
  std::vector<float> v = b.graph().value(c).constant->ToVector<float>();
  double sum = 0;
  float lo = 1, hi = -1;
  for (float x : v) {
    sum += x;
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  EXPECT_GE(lo, -0.25f);
  EXPECT_LT(hi, 0.75f);
  EXPECT_LT(lo, -0.24f);
  EXPECT_GT(hi, 0.74f);
  EXPECT_NEAR(sum / static_cast<double>(v.size()), 0.25, 0.01);
}

// With the real ops: the builder types a small conv net exactly as the op registry does.
TEST(GraphBuilderTest, TypesRealOps) {
  GraphBuilder b("convnet");
  ValueId x = b.Input("input", DType::kFloat32, {1, 3, 32, 32});
  ValueId w = b.RandomNormal("conv.weight", {8, 3, 3, 3}, 0.1f);
  ValueId bias = b.RandomNormal("conv.bias", {8}, 0.1f);
  ValueId y = b.Node("Conv", {x, w, bias},
                     {{"kernel_shape", {3, 3}}, {"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}},
                     "conv");
  y = b.Node("Relu", {y});
  ValueId shape = b.Ints("shape", {1, -1});
  y = b.Node("Reshape", {y, shape});
  b.Output(y, "out");
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(b.type(y), (TensorType{DType::kFloat32, {1, 8 * 16 * 16}}));
  StatusOr<Graph> g = std::move(b).Build();
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->NumParameters(), 8 * 27 + 8 + 2);
}

}  // namespace
}  // namespace collage
