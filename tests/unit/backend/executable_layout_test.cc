// The executable inserts layout conversions exactly where a producer and a consumer
// disagree. The test backend here computes Softmax over the channel axis in the
// channels-last layout (channels contiguous), so a missing or wrong conversion changes the
// numbers.
#include <gtest/gtest.h>

#include <cmath>

#include "backend_test_util.h"
#include "collage/available_backends.h"
#include "collage/sdk/backend.h"
#include "runtime/executable.h"
#include "runtime/placement.h"

namespace collage {
namespace {

using testing::NodeOf;

class ChannelSoftmaxKernel : public Kernel {
 public:
  ChannelSoftmaxKernel(int64_t rows, int64_t channels) : rows_(rows), channels_(channels) {
    input_layouts_ = {Layout::ChannelsLast()};
    output_layouts_ = {Layout::ChannelsLast()};
  }
  Status Run(const KernelBuffers& buffers) const override {
    const float* x = static_cast<const float*>(buffers.inputs[0]);
    float* y = static_cast<float*>(buffers.outputs[0]);
    for (int64_t r = 0; r < rows_; ++r) {
      const float* in = x + r * channels_;
      float* out = y + r * channels_;
      float max = in[0];
      for (int64_t c = 1; c < channels_; ++c) max = std::max(max, in[c]);
      float sum = 0;
      for (int64_t c = 0; c < channels_; ++c) sum += out[c] = std::exp(in[c] - max);
      for (int64_t c = 0; c < channels_; ++c) out[c] /= sum;
    }
    return Status();
  }

 private:
  int64_t rows_, channels_;
};

class ChannelsLastSoftmaxBackend : public Backend {
 public:
  ChannelsLastSoftmaxBackend() {
    rules_.Add(Rule("softmax_channels_last",
                    Op("Softmax").If([](const Graph& g, const Node& n) {
                      return g.opset() >= 13 && n.attributes.GetInt("axis", -1) == 1 &&
                             g.value(n.inputs[0]).type.shape.size() == 4;
                    }))
                   .Compiles([](const CompileRequest& request,
                                const Match&) -> StatusOr<std::unique_ptr<Kernel>> {
                     const Shape& shape = request.type(request.inputs[0]).shape;
                     return std::unique_ptr<Kernel>(
                         new ChannelSoftmaxKernel(shape[0] * shape[2] * shape[3], shape[1]));
                   }));
  }
  std::string name() const override { return "test_channels_last"; }
  std::string version() const override { return "1"; }
  const RuleSet& rules() const override { return rules_; }

 private:
  RuleSet rules_;
};

const Backend& TestBackend() {
  BackendRegistry& registry = GlobalBackendRegistry();
  if (registry.Find("test_channels_last") == nullptr) {
    EXPECT_TRUE(registry.Register(std::make_unique<ChannelsLastSoftmaxBackend>()).ok());
  }
  return *registry.Find("test_channels_last");
}

// x → Softmax(axis 1) → Softmax(axis 1) → Relu → y, plus the first softmax as an output.
Graph SoftmaxGraph() {
  Graph g;
  g.set_opset(17);
  TensorType t{DType::kFloat32, {2, 3, 4, 5}};
  ValueId x = g.AddValue("x", t);
  g.AddInput(x);
  ValueId s1 = g.AddValue("s1", t), s2 = g.AddValue("s2", t), y = g.AddValue("y", t);
  Node first = NodeOf("softmax1", "Softmax", {x}, {s1});
  first.attributes.Set("axis", int64_t{1});
  Node second = NodeOf("softmax2", "Softmax", {s1}, {s2});
  second.attributes.Set("axis", int64_t{1});
  EXPECT_TRUE(g.AddNode(first).ok());
  EXPECT_TRUE(g.AddNode(second).ok());
  EXPECT_TRUE(g.AddNode(NodeOf("relu", "Relu", {s2}, {y})).ok());
  g.AddOutput(y);
  g.AddOutput(s1);
  return g;
}

TEST(ExecutableLayoutTest, ConvertsOnlyAtLayoutBoundaries) {
  const Backend& backend = TestBackend();
  BackendRegistry& registry = GlobalBackendRegistry();
  Graph g = SoftmaxGraph();
  auto placement = PlaceOnSingleBackend(g, backend, registry);
  ASSERT_TRUE(placement.ok()) << placement.status().ToString();
  ASSERT_EQ(placement->groups.size(), 3u);
  EXPECT_EQ(placement->groups[0].backend, "test_channels_last");
  EXPECT_EQ(placement->groups[2].backend, "native");
  auto exe = Executable::Create(g, *placement, registry, 1);
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  // x into channels-last; s2 back to plain for Relu; s1 back to plain as a graph output.
  EXPECT_EQ((*exe)->num_conversions(), 3);

  auto reference_placement = PlaceOnSingleBackend(g, *registry.Find("native"), registry);
  ASSERT_TRUE(reference_placement.ok());
  auto reference = Executable::Create(g, *reference_placement, registry, 1);
  ASSERT_TRUE(reference.ok());
  EXPECT_EQ((*reference)->num_conversions(), 0);

  Tensor x(DType::kFloat32, {2, 3, 4, 5});
  for (int64_t i = 0; i < x.num_elements(); ++i) x.data_as<float>()[i] = std::sin(0.37f * static_cast<float>(i));
  auto got = (*exe)->Run({x});
  auto want = (*reference)->Run({x});
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_TRUE(want.ok());
  for (size_t o = 0; o < 2; ++o) {
    std::vector<float> a = (*got)[o].ToVector<float>(), b = (*want)[o].ToVector<float>();
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-6) << "output " << o << " at " << i;
  }
}

// MatMul(Relu(a), Softmax(b)) with the Softmax on the channels-last backend: the MatMul's
// second input needs a conversion, its first does not. The first must stay live through the
// MatMul itself (a MatMul whose output shared its input's bytes would read what it wrote).
TEST(ExecutableLayoutTest, AnInputStaysLiveWhenALaterInputOfItsGroupIsConverted) {
  const Backend& backend = TestBackend();
  BackendRegistry& registry = GlobalBackendRegistry();
  Graph g;
  g.set_opset(17);
  TensorType ta{DType::kFloat32, {2, 3, 4, 5}}, tb{DType::kFloat32, {2, 3, 5, 4}};
  ValueId a = g.AddValue("a", ta), b = g.AddValue("b", tb);
  g.AddInput(a);
  g.AddInput(b);
  ValueId r = g.AddValue("r", ta), s = g.AddValue("s", tb), y = g.AddValue("y", TensorType{DType::kFloat32, {2, 3, 4, 4}});
  ASSERT_TRUE(g.AddNode(NodeOf("relu", "Relu", {a}, {r})).ok());
  Node softmax = NodeOf("softmax", "Softmax", {b}, {s});
  softmax.attributes.Set("axis", int64_t{1});
  ASSERT_TRUE(g.AddNode(softmax).ok());
  ASSERT_TRUE(g.AddNode(NodeOf("matmul", "MatMul", {r, s}, {y})).ok());
  g.AddOutput(y);
  Placement placement;
  placement.groups = {{"native", {"op", SubGraph(3, {0})}},
                      {backend.name(), {"softmax_channels_last", SubGraph(3, {1})}},
                      {"native", {"op", SubGraph(3, {2})}}};
  auto exe = Executable::Create(g, placement, registry, 1);
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  EXPECT_EQ((*exe)->num_conversions(), 2);  // b into channels-last, s back to plain
  auto reference_placement = PlaceOnSingleBackend(g, *registry.Find("native"), registry);
  ASSERT_TRUE(reference_placement.ok());
  auto reference = Executable::Create(g, *reference_placement, registry, 1);
  ASSERT_TRUE(reference.ok());
  Tensor ta_data(DType::kFloat32, ta.shape), tb_data(DType::kFloat32, tb.shape);
  for (int64_t i = 0; i < ta_data.num_elements(); ++i) ta_data.data_as<float>()[i] = std::cos(0.21f * static_cast<float>(i));
  for (int64_t i = 0; i < tb_data.num_elements(); ++i) tb_data.data_as<float>()[i] = std::sin(0.37f * static_cast<float>(i));
  auto got = (*exe)->Run({ta_data, tb_data});
  auto want = (*reference)->Run({ta_data, tb_data});
  ASSERT_TRUE(got.ok() && want.ok());
  std::vector<float> x = (*got)[0].ToVector<float>(), w = (*want)[0].ToVector<float>();
  for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(x[i], w[i], 1e-5) << i;
}

TEST(ExecutableLayoutTest, ARuleWhoseConstraintRejectsIsNeverChosen) {
  const Backend& backend = TestBackend();
  Graph g = SoftmaxGraph();
  g.mutable_node(1).attributes.Set("axis", int64_t{2});  // the rule takes axis 1 only
  auto placement = PlaceOnSingleBackend(g, backend, GlobalBackendRegistry());
  ASSERT_TRUE(placement.ok());
  EXPECT_EQ(placement->groups[0].backend, "test_channels_last");
  EXPECT_EQ(placement->groups[1].backend, "native");
}

// A backend whose rule offers Relu but whose Compile always fails.
class FailingBackend : public Backend {
 public:
  FailingBackend() {
    rules_.Add(Rule("relu", Op("Relu"))
                   .Compiles([](const CompileRequest&,
                                const Match&) -> StatusOr<std::unique_ptr<Kernel>> {
                     return Status(StatusCode::kInternal, "the library refused the descriptor");
                   }));
  }
  std::string name() const override { return "test_failing"; }
  std::string version() const override { return "1"; }
  const RuleSet& rules() const override { return rules_; }

 private:
  RuleSet rules_;
};

TEST(ExecutableLayoutTest, ACompileFailureNamesBackendRuleAndNode) {
  BackendRegistry& registry = GlobalBackendRegistry();
  if (registry.Find("test_failing") == nullptr) {
    ASSERT_TRUE(registry.Register(std::make_unique<FailingBackend>()).ok());
  }
  Graph g = SoftmaxGraph();
  auto placement = PlaceOnSingleBackend(g, *registry.Find("test_failing"), registry);
  ASSERT_TRUE(placement.ok());
  auto exe = Executable::Create(g, *placement, registry, 1);
  ASSERT_FALSE(exe.ok());
  const std::string& message = exe.status().message();
  EXPECT_NE(message.find("backend 'test_failing', rule 'relu', node 'relu' (Relu)"), std::string::npos)
      << message;
  EXPECT_NE(message.find("the library refused the descriptor"), std::string::npos) << message;
}

TEST(PlacementTest, ValidationNamesWhatIsWrong) {
  BackendRegistry& registry = GlobalBackendRegistry();
  Graph g = SoftmaxGraph();
  auto good = PlaceOnSingleBackend(g, *registry.Find("native"), registry);
  ASSERT_TRUE(good.ok());
  EXPECT_TRUE(ValidatePlacement(g, *good, registry).ok());

  Placement missing = *good;
  missing.groups.pop_back();
  Status status = ValidatePlacement(g, missing, registry);
  EXPECT_NE(status.message().find("'relu'"), std::string::npos) << status.message();

  Placement unknown = *good;
  unknown.groups[0].backend = "nonexistent";
  EXPECT_EQ(ValidatePlacement(g, unknown, registry).code(), StatusCode::kNotFound);

  Placement overlapping = *good;
  overlapping.groups.push_back(overlapping.groups[0]);
  EXPECT_NE(ValidatePlacement(g, overlapping, registry).message().find("overlaps"), std::string::npos);

  Placement out_of_order = *good;
  std::swap(out_of_order.groups[0], out_of_order.groups[1]);
  EXPECT_NE(ValidatePlacement(g, out_of_order, registry).message().find("no earlier group"),
            std::string::npos);

  Placement non_convex = *good;  // {softmax1, relu} skips softmax2 between them
  non_convex.groups = {{"native", {"op", SubGraph(g.num_nodes(), {0, 2})}},
                       {"native", {"op", SubGraph(g.num_nodes(), {1})}}};
  EXPECT_NE(ValidatePlacement(g, non_convex, registry).message().find("not convex"), std::string::npos);
}

}  // namespace
}  // namespace collage
