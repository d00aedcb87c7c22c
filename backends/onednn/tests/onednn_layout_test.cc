// oneDNN layouts: opaque names round-trip through reorders, and blocked producers and
// consumers agree on the format so that a conv_blocked chain needs no conversion.
#include <cstdlib>

#include "backend_test_util.h"

namespace collage::testing {
namespace {

// Runs a one-input, one-output kernel.
Tensor RunConversion(const Kernel& kernel, const Tensor& in, size_t out_bytes) {
  Tensor out(DType::kFloat32, {static_cast<int64_t>((out_bytes + 3) / 4)});
  std::vector<char> workspace(kernel.workspace_bytes() + 64);
  void* ws = workspace.data() + (64 - reinterpret_cast<uintptr_t>(workspace.data()) % 64) % 64;
  const void* inputs[] = {in.data()};
  void* outputs[] = {out.data()};
  Status s = kernel.Run({inputs, outputs, kernel.workspace_bytes() ? ws : nullptr});
  EXPECT_TRUE(s.ok()) << s.ToString();
  return out;
}

TEST(OnednnLayout, BlockedAndChannelsLastRoundTrip) {
  const Backend& backend = BackendNamed("onednn");
  const TensorType type{DType::kFloat32, {2, 20, 3, 5}};
  // nChw16c: channels padded to 32.
  const Layout blocked = Layout::Opaque("onednn", "abcd:16b", 2 * 32 * 3 * 5 * 4);
  std::mt19937 rng(3);
  Tensor x = RandomTensor(DType::kFloat32, type.shape, rng);

  auto to_blocked = backend.CompileConversion(type, Layout::Plain(), blocked);
  ASSERT_TRUE(to_blocked.ok()) << to_blocked.status().ToString();
  Tensor b = RunConversion(**to_blocked, x, blocked.BufferBytes(type));
  // Element (n=1, c=17, h=2, w=4) sits in block 1 of channels at lane 1.
  const float* bp = b.data_as<float>();
  const float* xp = x.data_as<float>();
  EXPECT_EQ(bp[(((1 * 2 + 1) * 3 + 2) * 5 + 4) * 16 + 1], xp[((1 * 20 + 17) * 3 + 2) * 5 + 4]);

  auto to_cl = backend.CompileConversion(type, blocked, Layout::ChannelsLast());
  ASSERT_TRUE(to_cl.ok()) << to_cl.status().ToString();
  Tensor cl = RunConversion(**to_cl, b, type.nbytes());
  EXPECT_EQ(cl.data_as<float>()[((1 * 3 + 2) * 5 + 4) * 20 + 17], xp[((1 * 20 + 17) * 3 + 2) * 5 + 4]);

  auto to_plain = backend.CompileConversion(type, blocked, Layout::Plain());
  ASSERT_TRUE(to_plain.ok());
  Tensor back = RunConversion(**to_plain, b, type.nbytes());
  for (int64_t i = 0; i < x.num_elements(); ++i) ASSERT_EQ(back.data_as<float>()[i], xp[i]) << i;

  EXPECT_FALSE(backend.CompileConversion(type, Layout::Opaque("onednn", "abzd", 1), Layout::Plain()).ok());
  EXPECT_FALSE(backend.CompileConversion(type, Layout::Opaque("onednn", "abc", 1), Layout::Plain()).ok());
}

TEST(OnednnLayout, BlockedConvChainAgreesOnFormat) {
  GraphBuilder b("chain");
  ValueId x = b.Input("x", DType::kFloat32, {1, 32, 12, 12});
  ValueId y = b.Node("Conv", {x, b.RandomNormal("w1", {32, 32, 3, 3}, 0.1f)}, {{"pads", {1, 1, 1, 1}}}, "c1");
  ValueId z = b.Node("Conv", {y, b.RandomNormal("w2", {32, 1, 3, 3}, 0.3f)},
                     {{"pads", {1, 1, 1, 1}}, {"group", 32}}, "c2");
  b.Output(b.Node("MaxPool", {z}, {{"kernel_shape", {2, 2}}, {"strides", {2, 2}}}));
  Graph g = BuildOrFail(std::move(b));
  std::vector<Layout> produced, consumed;
  for (const Candidate& c : EnumerateCandidates(g, BackendNamed("onednn").rules())) {
    if (c.rule != "conv_blocked" && c.rule != "max_pool_blocked") continue;
    CompileRequest request = CompileRequest::For(g, c.nodes, c.rule, 1);
    auto kernel = BackendNamed("onednn").Compile(request);
    ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
    if (request.inputs[0] != x) consumed.push_back((*kernel)->input_layouts()[0]);
    if (request.outputs[0] != g.outputs()[0]) produced.push_back((*kernel)->output_layouts()[0]);
  }
  ASSERT_EQ(produced.size(), 2u);
  ASSERT_EQ(consumed.size(), 2u);
  EXPECT_EQ(produced[0], consumed[0]);
  EXPECT_EQ(produced[1], consumed[1]);
  EXPECT_NE(produced[0], Layout::Plain());
}

TEST(OnednnBackend, VersionNamesLibraryAndIsa) {
  const std::string v = BackendNamed("onednn").version();
  EXPECT_EQ(v.rfind("oneDNN 2.", 0), 0u) << v;
  EXPECT_NE(v.find(' ', 7), std::string::npos) << v;  // then the ISA
}

}  // namespace
}  // namespace collage::testing
