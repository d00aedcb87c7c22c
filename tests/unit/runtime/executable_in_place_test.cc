// Views and Concats written in place (runtime/in_place.h): groups that run no kernel because
// their output shares bytes with other values. Each graph is checked three ways: its outputs
// against the reference kernels, which groups ran no step, and that no two buffers live at a
// common step share bytes unless one is a view or slice of the other (they then share one
// arena request).
#include <gtest/gtest.h>

#include <cmath>

#include "../backend/backend_test_util.h"
#include "../zoo/zoo_test_util.h"
#include "collage/available_backends.h"
#include "collage/normalized_error.h"
#include "collage/sdk/backend.h"
#include "ops/graph_builder.h"
#include "runtime/executable.h"
#include "runtime/placement.h"
#include "zoo/zoo.h"

namespace collage {
namespace {

// Relu over a 4-D tensor held channels-last: its output's bytes are not plain.
class ChannelsLastReluKernel : public Kernel {
 public:
  explicit ChannelsLastReluKernel(int64_t n) : n_(n) {
    input_layouts_ = {Layout::ChannelsLast()};
    output_layouts_ = {Layout::ChannelsLast()};
  }
  Status Run(const KernelBuffers& buffers) const override {
    const float* x = static_cast<const float*>(buffers.inputs[0]);
    float* y = static_cast<float*>(buffers.outputs[0]);
    for (int64_t i = 0; i < n_; ++i) y[i] = std::max(x[i], 0.0f);
    return Status();
  }

 private:
  int64_t n_;
};

class ChannelsLastReluBackend : public Backend {
 public:
  ChannelsLastReluBackend() {
    rules_.Add(Rule("relu_channels_last", Op("Relu").If([](const Graph& g, const Node& n) {
                 return g.value(n.inputs[0]).type.shape.size() == 4;
               }))
                   .Compiles([](const CompileRequest& request,
                                const Match&) -> StatusOr<std::unique_ptr<Kernel>> {
                     return std::unique_ptr<Kernel>(new ChannelsLastReluKernel(
                         request.type(request.inputs[0]).num_elements()));
                   }));
  }
  std::string name() const override { return "test_channels_last_relu"; }
  std::string version() const override { return "1"; }
  const RuleSet& rules() const override { return rules_; }

 private:
  RuleSet rules_;
};

const Backend& ChannelsLastBackend() {
  BackendRegistry& registry = GlobalBackendRegistry();
  if (registry.Find("test_channels_last_relu") == nullptr) {
    EXPECT_TRUE(registry.Register(std::make_unique<ChannelsLastReluBackend>()).ok());
  }
  return *registry.Find("test_channels_last_relu");
}

// Every node its own group on native (its one-node rule), so each view or Concat is a group
// of its own.
Placement OneNodePerGroup(const Graph& graph) {
  Placement placement;
  for (NodeId n = 0; n < graph.num_nodes(); ++n) {
    placement.groups.emplace_back("native", Candidate{"op", SubGraph(graph.num_nodes(), {n})});
  }
  return placement;
}

// Buffers live at a common step never share bytes: views and slices share their source's
// request, so distinct requests must be disjoint.
void ExpectNoLiveOverlap(const Executable& exe) {
  const auto& requests = exe.buffer_requests();
  const auto& plan = exe.memory_plan();
  for (size_t i = 0; i < requests.size(); ++i) {
    for (size_t j = i + 1; j < requests.size(); ++j) {
      if (!LifetimesOverlap(requests[i], requests[j])) continue;
      bool disjoint = plan.offsets[i] + requests[i].bytes <= plan.offsets[j] ||
                      plan.offsets[j] + requests[j].bytes <= plan.offsets[i];
      EXPECT_TRUE(disjoint) << "requests " << i << " and " << j;
    }
  }
}

// The outputs of `exe` against the reference kernels on seeded random inputs, twice (the
// second run reuses the arena), and its buffers.
void ExpectMatchesReference(const Graph& graph, const Executable& exe, double tolerance = 1e-6) {
  for (unsigned seed : {1u, 2u}) {
    const std::map<std::string, Tensor> inputs = zoo_test::RandomGraphInputs(graph, seed);
    auto reference = zoo_test::RunWithReferenceKernels(graph, inputs);
    ASSERT_TRUE(reference.ok()) << reference.status().ToString();
    std::vector<Tensor> ordered;
    for (ValueId in : graph.inputs()) ordered.push_back(inputs.at(graph.value(in).name));
    auto outputs = exe.Run(ordered);
    ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
    ASSERT_EQ(outputs->size(), graph.outputs().size());
    for (size_t o = 0; o < outputs->size(); ++o) {
      const std::string& name = graph.value(graph.outputs()[o]).name;
      const Tensor& expected = reference->at(name);
      ASSERT_EQ((*outputs)[o].shape(), expected.shape()) << name;
      EXPECT_LE(NormalizedError((*outputs)[o], expected), tolerance) << name << ", seed " << seed;
    }
  }
  ExpectNoLiveOverlap(exe);
}

std::unique_ptr<Executable> Compile(const Graph& graph, const Placement& placement) {
  auto exe = Executable::Create(graph, placement, GlobalBackendRegistry(), 1);
  EXPECT_TRUE(exe.ok()) << exe.status().ToString();
  return exe.ok() ? std::move(*exe) : nullptr;
}

// Compiles `graph` on `placement`, expects `elided` groups to run no kernel (and `steps`
// steps to run, unless -1), then checks its outputs and buffers. Null when it does not compile.
std::unique_ptr<Executable> CompileAndCheck(const Graph& graph, const Placement& placement,
                                            int elided, int steps = -1) {
  auto exe = Compile(graph, placement);
  if (exe == nullptr) return nullptr;
  EXPECT_EQ(exe->num_elided_groups(), elided);
  if (steps >= 0) {
    EXPECT_EQ(exe->num_steps(), steps);
  }
  ExpectMatchesReference(graph, *exe);
  return exe;
}

// Every Relu on 4-D tensors channels-last (the test backend), the rest on native.
Placement ChannelsLastPlacement(const Graph& graph) {
  auto placement = PlaceOnSingleBackend(graph, ChannelsLastBackend(), GlobalBackendRegistry());
  EXPECT_TRUE(placement.ok()) << placement.status().ToString();
  if (!placement.ok()) return Placement();
  EXPECT_EQ(placement->groups.front().backend, "test_channels_last_relu");
  return *placement;
}

Graph BuildOrDie(GraphBuilder&& b) {
  auto graph = std::move(b).Build();
  EXPECT_TRUE(graph.ok()) << graph.status().ToString();
  return graph.ok() ? std::move(*graph) : Graph();
}

TEST(ExecutableViewsTest, AChainOfViewsRunsNoStep) {
  GraphBuilder b("views");
  ValueId x = b.Input("x", DType::kFloat32, {2, 3, 4});
  ValueId r = b.Node("Relu", {x});
  ValueId v = b.Node("Reshape", {r, b.Ints("shape", {6, 4})});
  v = b.Node("Flatten", {v}, {{"axis", 0}});
  v = b.Node("Unsqueeze", {v, b.Ints("axes", {0})});
  v = b.Node("Identity", {v});
  v = b.Node("Squeeze", {v, b.Ints("squeeze_axes", {0, 1})});
  b.Output(b.Node("Neg", {v}), "y");
  Graph graph = BuildOrDie(std::move(b));
  ASSERT_NE(CompileAndCheck(graph, OneNodePerGroup(graph), 5, 2), nullptr);  // Relu, Neg run
}

TEST(ExecutableViewsTest, ViewsOfAGraphInputAndAsGraphOutputs) {
  GraphBuilder b("input_views");
  ValueId x = b.Input("x", DType::kFloat32, {4, 8});
  ValueId flat = b.Node("Reshape", {x, b.Ints("shape", {32})});
  b.Output(flat, "flat");                        // a view of a graph input, handed out
  b.Output(b.Node("Identity", {flat}), "same");  // a view of a view, handed out too
  ValueId doubled = b.Node("Add", {flat, flat});
  b.Output(b.Node("Reshape", {doubled, b.Ints("back", {8, 4})}), "doubled");
  b.Output(x, "x_out");
  Graph graph = BuildOrDie(std::move(b));
  ASSERT_NE(CompileAndCheck(graph, OneNodePerGroup(graph), 3, 1), nullptr);
}

// A view read long after its source was computed: the source's buffer must outlive the view's
// readers, or the steps between (each with a fresh buffer) would reuse its bytes.
TEST(ExecutableViewsTest, AViewKeepsItsSourceAliveForItsReaders) {
  GraphBuilder b("late_reader");
  ValueId x = b.Input("x", DType::kFloat32, {64});
  ValueId a = b.Node("Exp", {x});
  ValueId view = b.Node("Reshape", {a, b.Ints("shape", {8, 8})});
  ValueId chain = b.Node("Neg", {x});
  for (int i = 0; i < 6; ++i) chain = b.Node("Sin", {chain});
  ValueId late = b.Node("Add", {view, b.Node("Reshape", {chain, b.Ints("shape2", {8, 8})})});
  b.Output(late, "y");
  Graph graph = BuildOrDie(std::move(b));
  auto exe = CompileAndCheck(graph, OneNodePerGroup(graph), 2);
  ASSERT_NE(exe, nullptr);
  // The view's source (Exp's output, written by step 0) is live until the last step.
  const auto& slots = exe->buffer_slots();
  const auto& requests = exe->buffer_requests();
  bool found = false;
  for (const auto& slot : slots) {
    const BufferRequest& request = requests[slot.request];
    if (request.first_step == 0) found = found || request.last_step == exe->num_steps() - 1;
  }
  EXPECT_TRUE(found);
}

// A constant has no arena buffer (kernels hold the constants they read): its view keeps its
// step.
TEST(ExecutableViewsTest, AViewOfAConstantKeepsItsStep) {
  GraphBuilder b("constant_view");
  ValueId x = b.Input("x", DType::kFloat32, {2, 6});
  ValueId c = b.RandomNormal("c", {12}, 1.0f);
  ValueId cv = b.Node("Reshape", {c, b.Ints("shape", {2, 6})});
  b.Output(b.Node("Add", {x, cv}), "y");
  b.Output(cv, "cv");
  Graph graph = BuildOrDie(std::move(b));
  ASSERT_NE(CompileAndCheck(graph, OneNodePerGroup(graph), 0, 2), nullptr);
}

// A Reshape of a value held channels-last must not alias it (its bytes are in another order):
// it stays a step, reading a plain conversion.
TEST(ExecutableViewsTest, AViewOfANonPlainLayoutKeepsItsStep) {
  GraphBuilder b("mixed_layout_view");
  ValueId x = b.Input("x", DType::kFloat32, {1, 3, 2, 2});
  ValueId r = b.Node("Relu", {x});
  b.Output(b.Node("Reshape", {r, b.Ints("shape", {1, 12})}), "y");
  Graph graph = BuildOrDie(std::move(b));
  ASSERT_NE(CompileAndCheck(graph, ChannelsLastPlacement(graph), 0), nullptr);
}

// Profiles list the groups that ran no kernel where their step would have run, with 0 ms.
TEST(ExecutableViewsTest, ProfilesListViewsWithNoTime) {
  GraphBuilder b("profiled");
  ValueId x = b.Input("x", DType::kFloat32, {2, 3});
  ValueId r = b.Node("Relu", {x}, {}, "relu");
  ValueId v = b.Node("Reshape", {r, b.Ints("shape", {6})}, {}, "reshape");
  b.Output(b.Node("Neg", {v}, {}, "neg"), "y");
  Graph graph = BuildOrDie(std::move(b));
  auto exe = Compile(graph, OneNodePerGroup(graph));
  ASSERT_NE(exe, nullptr);
  RunProfile profile;
  auto out = exe->Run({Tensor::FromVector<float>({2, 3}, {1, -2, 3, -4, 5, -6})}, &profile);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(profile.nodes.size(), 3u);
  EXPECT_EQ(profile.nodes[0].node_name, "relu");
  EXPECT_EQ(profile.nodes[1].node_name, "reshape");
  EXPECT_EQ(profile.nodes[1].elided, "view");
  EXPECT_EQ(profile.nodes[1].milliseconds, 0);
  EXPECT_EQ(profile.nodes[2].node_name, "neg");
  EXPECT_TRUE(profile.nodes[2].elided.empty());
}

// [1, 16 * k] from k producers: every slice is 64 bytes, so every offset is aligned.
class ConcatInPlaceTest : public ::testing::TestWithParam<int> {};

TEST_P(ConcatInPlaceTest, ProducersWriteIntoTheirSlices) {
  const int producers = GetParam();
  GraphBuilder b("concat");
  ValueId x = b.Input("x", DType::kFloat32, {1, 16});
  const char* ops[] = {"Relu", "Neg", "Exp", "Abs"};
  std::vector<ValueId> parts;
  for (int i = 0; i < producers; ++i) parts.push_back(b.Node(ops[i], {x}));
  ValueId cat = b.Node("Concat", parts, {{"axis", 1}});
  b.Output(b.Node("Sin", {cat}), "y");
  Graph graph = BuildOrDie(std::move(b));
  auto exe = CompileAndCheck(graph, OneNodePerGroup(graph), 1, producers + 1);
  ASSERT_NE(exe, nullptr);
  // The producers' outputs are slices of one request, at 64 * i bytes.
  const auto& slots = exe->buffer_slots();
  std::set<size_t> requests_with_slices;
  std::set<size_t> offsets;
  for (const auto& slot : slots) {
    if (slot.offset > 0) requests_with_slices.insert(slot.request);
    offsets.insert(slot.offset);
  }
  EXPECT_EQ(requests_with_slices.size(), producers > 1 ? 1u : 0u);
  EXPECT_EQ(offsets.size(), static_cast<size_t>(producers));
}

INSTANTIATE_TEST_SUITE_P(Producers, ConcatInPlaceTest, ::testing::Values(1, 2, 3, 4));

// A producer whose output is also read elsewhere (before and after the Concat, and handed out):
// the readers read its slice, which lives as long as the Concat's output does.
TEST(ExecutableConcatInPlaceTest, AnInputReadByOtherConsumersStaysCorrect) {
  GraphBuilder b("shared_input");
  ValueId x = b.Input("x", DType::kFloat32, {1, 2, 8});
  ValueId a = b.Node("Relu", {x});
  ValueId n = b.Node("Neg", {a});  // reads a's slice before the Concat
  ValueId cat = b.Node("Concat", {a, n}, {{"axis", 1}});
  ValueId later = b.Node("Mul", {a, a});  // and after it
  b.Output(cat, "cat");
  b.Output(later, "later");
  b.Output(a, "a");
  b.Output(b.Node("Reshape", {a, b.Ints("shape", {16})}), "a_flat");  // a view of a slice
  Graph graph = BuildOrDie(std::move(b));
  ASSERT_NE(CompileAndCheck(graph, OneNodePerGroup(graph), 2),
            nullptr);  // the Concat and the Reshape
}

// Concats that must copy: a dim before the axis above 1, a misaligned slice, a graph input, a
// constant or the same value twice among the inputs.
TEST(ExecutableConcatInPlaceTest, ConcatsThatCannotBeWrittenInPlaceKeepTheirStep) {
  GraphBuilder b("copying_concats");
  ValueId x = b.Input("x", DType::kFloat32, {2, 16});
  ValueId s = b.Input("s", DType::kFloat32, {1, 3});
  ValueId v = b.Input("v", DType::kFloat32, {1, 16});
  ValueId rows = b.Node("Concat", {b.Node("Relu", {x}), b.Node("Neg", {x})}, {{"axis", 1}});
  ValueId odd = b.Node("Concat", {b.Node("Relu", {s}), b.Node("Neg", {s})}, {{"axis", 1}});
  ValueId rv = b.Node("Relu", {v});
  ValueId with_input = b.Node("Concat", {rv, v}, {{"axis", 1}});
  ValueId with_constant =
      b.Node("Concat", {b.Node("Neg", {v}), b.RandomNormal("c", {1, 16}, 1.0f)}, {{"axis", 1}});
  ValueId twice = b.Node("Concat", {rv, rv}, {{"axis", 1}});
  b.Output(rows, "rows");
  b.Output(odd, "odd");
  b.Output(with_input, "with_input");
  b.Output(with_constant, "with_constant");
  b.Output(twice, "twice");
  Graph graph = BuildOrDie(std::move(b));
  ASSERT_NE(CompileAndCheck(graph, OneNodePerGroup(graph), 0), nullptr);
}

// A producer writing channels-last cannot write its plain slice: the Concat runs as a step.
TEST(ExecutableConcatInPlaceTest, AProducerInAnotherLayoutKeepsTheStep) {
  GraphBuilder b("mixed_layout_concat");
  ValueId x = b.Input("x", DType::kFloat32, {1, 4, 2, 2});
  ValueId cat = b.Node("Concat", {b.Node("Relu", {x}), b.Node("Neg", {x})}, {{"axis", 1}});
  b.Output(b.Node("Sin", {cat}), "y");
  Graph graph = BuildOrDie(std::move(b));
  ASSERT_NE(CompileAndCheck(graph, ChannelsLastPlacement(graph), 0), nullptr);
}

// A Split of [1, 48] into three [1, 16] (64-byte blocks): its outputs are read where they lie,
// as graph outputs too, and even when a Concat joins them again in another order.
TEST(ExecutableSplitInPlaceTest, OutputsAreSlicesOfTheInput) {
  GraphBuilder b("split");
  ValueId x = b.Input("x", DType::kFloat32, {1, 48});
  ValueId e = b.Node("Exp", {x});
  std::vector<ValueId> parts =
      b.NodeMulti("Split", {e, b.Ints("sizes", {16, 16, 16})}, 3, {{"axis", 1}});
  b.Output(b.Node("Neg", {parts[0]}), "neg");
  b.Output(parts[1], "middle");
  b.Output(b.Node("Concat", {parts[2], parts[0]}, {{"axis", 1}}), "rejoined");
  Graph graph = BuildOrDie(std::move(b));
  auto exe = CompileAndCheck(graph, OneNodePerGroup(graph), 1, 3);  // Exp, Neg, Concat run
  ASSERT_NE(exe, nullptr);
  std::set<size_t> offsets;
  for (const auto& slot : exe->buffer_slots()) offsets.insert(slot.offset);
  EXPECT_TRUE(offsets.count(64) && offsets.count(128));
}

// Splits that must copy: a dim before the axis above 1, a misaligned block, a constant input,
// an input held channels-last.
TEST(ExecutableSplitInPlaceTest, SplitsThatCannotBeReadInPlaceKeepTheirStep) {
  GraphBuilder b("copying_splits");
  ValueId x = b.Input("x", DType::kFloat32, {2, 32});
  ValueId s = b.Input("s", DType::kFloat32, {1, 6});
  for (ValueId part : b.NodeMulti("Split", {x, b.Ints("sizes", {16, 16})}, 2, {{"axis", 1}})) {
    b.Output(part);
  }
  for (ValueId part : b.NodeMulti("Split", {s, b.Ints("sizes2", {3, 3})}, 2, {{"axis", 1}})) {
    b.Output(part);
  }
  ValueId c = b.RandomNormal("c", {1, 32}, 1.0f);
  for (ValueId part : b.NodeMulti("Split", {c, b.Ints("sizes3", {16, 16})}, 2, {{"axis", 1}})) {
    b.Output(b.Node("Neg", {part}));
  }
  Graph graph = BuildOrDie(std::move(b));
  ASSERT_NE(CompileAndCheck(graph, OneNodePerGroup(graph), 0), nullptr);

  GraphBuilder b2("channels_last_split");
  ValueId y = b2.Input("y", DType::kFloat32, {1, 4, 4, 4});
  ValueId r = b2.Node("Relu", {y});
  for (ValueId part : b2.NodeMulti("Split", {r, b2.Ints("sizes", {2, 2})}, 2, {{"axis", 1}})) {
    b2.Output(part);
  }
  Graph mixed = BuildOrDie(std::move(b2));
  ASSERT_NE(CompileAndCheck(mixed, ChannelsLastPlacement(mixed), 0), nullptr);
}

// Zoo models, every node its own group: their Reshapes (and NASNet's channel Concats) run no
// step, and the outputs still match the reference kernels.
TEST(ExecutableInPlaceZooTest, BertRunsItsReshapesAsViews) {
  auto graph = BuildZooModel("bert_base");
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  int reshapes = 0;
  for (const Node& node : graph->nodes()) reshapes += node.op_type == "Reshape";
  ASSERT_GT(reshapes, 0);
  Placement placement = OneNodePerGroup(*graph);
  auto exe = Compile(*graph, placement);
  ASSERT_NE(exe, nullptr);
  EXPECT_GE(exe->num_elided_groups(), reshapes);
  EXPECT_EQ(exe->num_steps() + exe->num_elided_groups(), static_cast<int>(placement.groups.size()));
  ExpectMatchesReference(*graph, *exe, 1e-4);
}

// NASNet-A on native as a session places it: its channel Concats at batch 1 are written in
// place by their producers (those of them whose inputs are all computed and aligned).
TEST(ExecutableInPlaceZooTest, NasNetWritesItsConcatsInPlace) {
  auto graph = BuildZooModel("nasnet_a");
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  BackendRegistry& registry = GlobalBackendRegistry();
  auto placement = PlaceOnSingleBackend(*graph, *registry.Find("native"), registry);
  ASSERT_TRUE(placement.ok()) << placement.status().ToString();
  auto exe = Compile(*graph, *placement);
  ASSERT_NE(exe, nullptr);
  RunProfile profile;
  const std::map<std::string, Tensor> random = zoo_test::RandomGraphInputs(*graph, 3);
  std::vector<Tensor> inputs;
  for (ValueId in : graph->inputs()) inputs.push_back(random.at(graph->value(in).name));
  ASSERT_TRUE(exe->Run(inputs, &profile).ok());
  int concats = 0, in_place = 0;
  for (const NodeTiming& step : profile.nodes) {
    concats += step.op_type == "Concat";
    in_place += step.elided == "concat in place";
  }
  EXPECT_GT(concats, 0);
  EXPECT_GE(2 * in_place, concats);  // most of them
  EXPECT_EQ(profile.nodes.size(), placement->groups.size());
  ExpectMatchesReference(*graph, *exe, 1e-4);
}

}  // namespace
}  // namespace collage
