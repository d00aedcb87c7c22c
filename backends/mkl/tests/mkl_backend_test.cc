// The MKL backend: every candidate its MatMul, MatMul + bias, Gemm, Conv and ConvTranspose rules
// offer is compiled through a KernelRunner at 1 and 2 threads and compared with the reference
// kernels. Tolerance 1e-4 (normalized): reductions here are at most 576 long, where float32
// rounding stays around 1e-6 whatever order MKL sums in. Skipped when this build has no MKL
// (backends/mkl/CMakeLists.txt skips the backend when the library is not installed).
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <link.h>

#include <cstring>
#include <string>
#include <vector>

#include "backend_test_util.h"
#include "collage/available_backends.h"

namespace collage::testing {
namespace {

// MKL's per-thread count, from the MKL the backend's plug-in loaded (it is not linked into the
// tests: the plug-in loads it with RTLD_LOCAL); null when the plug-in is not loaded.
using SetNumThreadsLocal = int (*)(int);
SetNumThreadsLocal MklSetNumThreadsLocal() {
  void* mkl = dlopen("libmkl_intel_lp64.so.3", RTLD_NOW | RTLD_NOLOAD);
  return mkl == nullptr ? nullptr
                        : reinterpret_cast<SetNumThreadsLocal>(dlsym(mkl, "MKL_Set_Num_Threads_Local"));
}

class MklTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (GlobalBackendRegistry().Find("mkl") == nullptr) GTEST_SKIP() << "mkl is not built";
  }
};

// `rule` offers exactly one candidate on `graph`, and it matches the reference compiled for
// 1 thread and for 2.
void ExpectRuleMatches(const Graph& graph, const std::string& rule) {
  for (int threads : {1, 2}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    collage::testing::ExpectRuleMatches(graph, "mkl", rule, kAnyNodes, 1e-4, 13, threads);
  }
}

// The file names of the shared libraries loaded in this process.
std::vector<std::string> LoadedLibraries() {
  std::vector<std::string> names;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        const char* slash = std::strrchr(info->dlpi_name, '/');
        static_cast<std::vector<std::string>*>(out)->push_back(slash ? slash + 1 : info->dlpi_name);
        return 0;
      },
      &names);
  return names;
}

bool Loaded(const std::vector<std::string>& libraries, const std::string& prefix) {
  for (const std::string& name : libraries) {
    if (name.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

TEST_F(MklTest, VersionNamesReleaseAndCodePath) {
  // "MKL 2026.0.2 build 20260915 def": release, build and the kernels MKL dispatched to.
  const std::string version = BackendNamed("mkl").version();
  EXPECT_EQ(version.rfind("MKL 20", 0), 0u) << version;
  EXPECT_NE(version.find(" build "), std::string::npos) << version;
  const std::string path = version.substr(version.rfind(' ') + 1);
  EXPECT_TRUE(Loaded(LoadedLibraries(), "libmkl_" + path + ".so")) << version;
}

TEST_F(MklTest, RunsOnLibgompNotIntelOpenmp) {
  const std::vector<std::string> libraries = LoadedLibraries();
  EXPECT_TRUE(Loaded(libraries, "libmkl_gnu_thread.so"));
  EXPECT_TRUE(Loaded(libraries, "libgomp.so"));
  EXPECT_FALSE(Loaded(libraries, "libmkl_intel_thread.so"));
  EXPECT_FALSE(Loaded(libraries, "libiomp5.so"));
  EXPECT_FALSE(Loaded(libraries, "libmkl_rt.so"));
}

// MatMul of two inputs, or of an input by a constant (b_constant), or of a constant by an
// input (a_constant).
Graph MatMulGraph(const Shape& a, const Shape& b, bool b_constant = false,
                  bool a_constant = false) {
  GraphBuilder builder("matmul");
  ValueId x =
      a_constant ? builder.RandomNormal("v", a, 1.0f) : builder.Input("a", DType::kFloat32, a);
  ValueId y =
      b_constant ? builder.RandomNormal("w", b, 1.0f) : builder.Input("b", DType::kFloat32, b);
  builder.Output(builder.Node("MatMul", {x, y}));
  return BuildOrFail(std::move(builder));
}

TEST_F(MklTest, MatMulShapes) {
  struct Case {
    Shape a, b;
    bool b_constant, a_constant;
  };
  const Case cases[] = {
      {{7, 13}, {13, 5}, false, false},            // plain 2-D: cblas_sgemm
      {{7, 13}, {13, 5}, true, false},             // constant weight: packed B
      {{7, 13}, {13, 5}, false, true},             // constant left operand: packed A
      {{2, 3, 7, 13}, {13, 5}, true, false},       // batch folds into one packed GEMM
      {{3, 7, 13}, {3, 13, 5}, true, false},       // a packed B per batch entry
      {{7, 13}, {3, 13, 5}, true, false},          // A broadcast over packed B blocks
      {{3, 7, 13}, {3, 13, 5}, false, false},      // batched: one batch_strided call
      {{2, 4, 9, 8}, {2, 4, 8, 9}, false, false},  // attention's Q x K^T, 2 batch dims
      {{7, 13}, {4, 13, 5}, false, false},         // A broadcast: stride 0
      {{4, 7, 13}, {13, 5}, false, false},         // B an input without batch: folds
      {{2, 1, 7, 13}, {3, 13, 5}, false, false},   // both broadcast: uneven, a loop
      {{13}, {4, 13, 5}, false, false},            // 1-D A: a row, dropped from the output
      {{13}, {13, 5}, true, false},                // 1-D A by a packed B
      {{2, 7, 13}, {13}, false, false},            // 1-D B: a column, dropped
      {{2, 7, 13}, {13}, true, false},             // 1-D constant B
      {{13}, {13}, false, false},                  // dot product: a scalar
      {{7, 0}, {0, 5}, false, false},              // empty reduction: zeros
      {{7, 0}, {0, 5}, true, false},               // empty reduction, nothing to pack
      {{128, 96}, {96, 64}, true, false},          // big enough to use the threads
      {{12, 64, 32}, {12, 32, 64}, false, false},  // big batched
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(ShapeToString(c.a) + (c.a_constant ? " (constant)" : "") + " x " +
                 ShapeToString(c.b) + (c.b_constant ? " (constant)" : ""));
    ExpectRuleMatches(MatMulGraph(c.a, c.b, c.b_constant, c.a_constant), "matmul");
  }
}

TEST_F(MklTest, MatMulFusesBiasRow) {
  for (const Shape& bias : {Shape{5}, Shape{1, 5}, Shape{1}, Shape{}}) {
    SCOPED_TRACE("bias " + ShapeToString(bias));
    Graph graph = MatMulAddGraph(bias);
    ExpectRuleMatches(graph, "matmul_bias");
    ExpectRuleMatches(graph, "matmul");  // the MatMul alone is offered too
  }
}

TEST_F(MklTest, BiasThatIsNotARowIsNotFused) {
  for (const Shape& bias : {Shape{7, 1}, Shape{2, 7, 5}}) {
    EXPECT_FALSE(RuleOffers(MatMulAddGraph(bias), "mkl", "matmul_bias"))
        << ShapeToString(bias);
  }
}

TEST_F(MklTest, RejectsNonFloat32) {
  GraphBuilder b("int_matmul");
  ValueId x = b.Input("a", DType::kInt32, {4, 3});
  ValueId y = b.Input("b", DType::kInt32, {3, 2});
  b.Output(b.Node("MatMul", {x, y}));
  EXPECT_FALSE(RuleOffers(BuildOrFail(std::move(b)), "mkl", "matmul"));
}

TEST_F(MklTest, GemmFlagsAndBroadcastC) {
  for (const GemmCase& c : GemmCases()) {
    SCOPED_TRACE(c.ToString());
    ExpectRuleMatches(GemmGraph(c), "gemm");
  }
}

TEST_F(MklTest, GemmOfTwoInputsAndOfAConstantA) {
  for (bool a_constant : {false, true}) {
    SCOPED_TRACE(a_constant ? "constant A, input B: packed A" : "two inputs: cblas_sgemm");
    for (int trans_a : {0, 1}) {
      GraphBuilder b("gemm_inputs");
      const Shape a_shape = trans_a ? Shape{9, 6} : Shape{6, 9};
      ValueId a =
          a_constant ? b.RandomNormal("a", a_shape, 1.0f) : b.Input("a", DType::kFloat32, a_shape);
      ValueId w = b.Input("b", DType::kFloat32, {5, 9});
      b.Output(b.Node("Gemm", {a, w, b.RandomNormal("c", {5}, 1.0f)},
                      {{"transA", trans_a}, {"transB", 1}, {"alpha", 0.5f}, {"beta", 2.0f}}));
      ExpectRuleMatches(BuildOrFail(std::move(b)), "gemm");
    }
  }
}

const std::vector<Conv2dCase>& Conv2dCases() {
  static const std::vector<Conv2dCase> cases = {
      {"3x3 pad 1", {1, 8, 10, 10}, {16, 8, 3, 3}, {{"pads", {1, 1, 1, 1}}}},
      {"3x3 no bias, batch 2", {2, 8, 10, 10}, {16, 8, 3, 3}, {{"pads", {1, 1, 1, 1}}}, false},
      {"stride 2, odd pads",
       {2, 4, 11, 9},
       {6, 4, 3, 3},
       {{"strides", {2, 2}}, {"pads", {0, 1, 2, 1}}}},
      {"dilation 2", {1, 4, 12, 12}, {5, 4, 3, 3}, {{"dilations", {2, 2}}, {"pads", {2, 2, 2, 2}}}},
      {"groups 2", {1, 8, 9, 9}, {6, 4, 3, 3}, {{"group", 2}, {"pads", {1, 1, 1, 1}}}},
      {"groups 4, stride 2, dilation 2",
       {2, 8, 13, 13},
       {8, 2, 3, 3},
       {{"group", 4}, {"strides", {2, 2}}, {"dilations", {2, 2}}, {"pads", {1, 2, 1, 2}}}},
      {"depthwise", {1, 8, 9, 9}, {8, 1, 3, 3}, {{"group", 8}, {"pads", {1, 1, 1, 1}}}},
      {"1x1 pointwise", {2, 16, 7, 7}, {8, 16, 1, 1}, {}},
      {"1x1 stride 2", {1, 16, 7, 7}, {8, 16, 1, 1}, {{"strides", {2, 2}}}},
      {"7x5 stride 3x2",
       {1, 3, 20, 17},
       {4, 3, 7, 5},
       {{"strides", {3, 2}}, {"pads", {3, 2, 3, 2}}}},
      {"SAME_UPPER",
       {1, 4, 10, 9},
       {4, 4, 4, 3},
       {{"auto_pad", "SAME_UPPER"}, {"strides", {2, 2}}}},
      {"SAME_LOWER",
       {1, 4, 10, 9},
       {4, 4, 4, 3},
       {{"auto_pad", "SAME_LOWER"}, {"strides", {2, 2}}}},
      {"VALID", {1, 4, 10, 9}, {4, 4, 3, 3}, {{"auto_pad", "VALID"}}},
      {"ResNet 3x3 64", {1, 64, 28, 28}, {64, 64, 3, 3}, {{"pads", {1, 1, 1, 1}}}},
  };
  return cases;
}

TEST_F(MklTest, ConvVariants) {
  for (const Conv2dCase& c : Conv2dCases()) {
    SCOPED_TRACE(c.name);
    ExpectRuleMatches(Conv2dGraph(c, false), "conv");
  }
}

TEST_F(MklTest, ConvReluEpilogue) {
  for (const Conv2dCase& c : Conv2dCases()) {
    SCOPED_TRACE(c.name);
    Graph graph = Conv2dGraph(c, true);
    ExpectRuleMatches(graph, "conv_relu");
    ExpectRuleMatches(graph, "conv");
  }
}

TEST_F(MklTest, ConvOnlyTwoDimensionalConstantWeights) {
  EXPECT_FALSE(RuleOffers(Conv2dGraph({"1-D", {1, 4, 16}, {4, 4, 3}, {}}, false), "mkl", "conv"));
  EXPECT_FALSE(
      RuleOffers(Conv2dGraph({"3-D", {1, 2, 6, 6, 6}, {2, 2, 3, 3, 3}, {}}, false), "mkl", "conv"));
  GraphBuilder b("weight_input");
  ValueId x = b.Input("x", DType::kFloat32, {1, 4, 8, 8});
  ValueId w = b.Input("w", DType::kFloat32, {4, 4, 3, 3});
  b.Output(b.Node("Conv", {x, w}));
  EXPECT_FALSE(RuleOffers(BuildOrFail(std::move(b)), "mkl", "conv"));
}

TEST_F(MklTest, ConvTransposeOfOnePixelPerImageFoldsTheBatch) {
  // A generator's first layer: batch 3, one input pixel each, every image in one product.
  GraphBuilder b("generator head");
  ValueId x = b.Input("x", DType::kFloat32, {3, 5, 1, 1});
  b.Output(b.Node("ConvTranspose",
                  {x, b.RandomNormal("w", {5, 4, 3, 3}, 0.5f), b.RandomNormal("b", {4}, 1.0f)},
                  {{"strides", {2, 2}}}));
  ExpectRuleMatches(BuildOrFail(std::move(b)), "conv_transpose");
}

TEST_F(MklTest, ConvTransposeGroupedDilatedPaddedWithOutputPadding) {
  GraphBuilder b("deconvolution");
  ValueId x = b.Input("x", DType::kFloat32, {2, 6, 5, 4});
  b.Output(b.Node("ConvTranspose", {x, b.RandomNormal("w", {6, 2, 3, 2}, 0.5f)},
                  {{"group", int64_t{3}},
                   {"strides", {3, 2}},
                   {"dilations", {2, 1}},
                   {"pads", {1, 0, 2, 1}},
                   {"output_padding", {1, 1}}}));
  ExpectRuleMatches(BuildOrFail(std::move(b)), "conv_transpose");
}

TEST_F(MklTest, EveryCandidateOfAMixedGraph) {
  // Conv + Relu feeding a flattening MatMul + bias and a Gemm: what CheckAllCandidates finds.
  GraphBuilder b("mixed");
  ValueId x = b.Input("x", DType::kFloat32, {1, 3, 8, 8});
  ValueId y =
      b.Node("Conv", {x, b.RandomNormal("w", {4, 3, 3, 3}, 0.3f)}, {{"pads", {1, 1, 1, 1}}});
  y = b.Node("Relu", {y});
  y = b.Node("Reshape", {y, b.Constant<int64_t>("shape", {2}, {1, 256})});
  y = b.Node("MatMul", {y, b.RandomNormal("w1", {256, 10}, 0.1f)});
  y = b.Node("Add", {y, b.RandomNormal("b1", {10}, 1.0f)});
  b.Output(b.Node("Gemm", {y, b.RandomNormal("w2", {3, 10}, 1.0f)}, {{"transB", 1}}));
  const std::set<std::string> offered = CheckAllCandidates(BuildOrFail(std::move(b)), "mkl");
  for (const char* rule : {"conv", "conv_relu", "matmul", "matmul_bias", "gemm"}) {
    EXPECT_TRUE(Offers(offered, rule)) << rule;
  }
}

TEST_F(MklTest, KernelLeavesTheCallersThreadCountAsItWas) {
  const SetNumThreadsLocal set_local = MklSetNumThreadsLocal();
  ASSERT_NE(set_local, nullptr);
  const Graph graph = MatMulGraph({64, 64}, {64, 64}, true);
  const std::vector<Candidate> candidates = CandidatesOf(graph, "mkl", "matmul");
  ASSERT_EQ(candidates.size(), 1u);
  const CompileRequest request = CompileRequest::For(graph, candidates[0].nodes, "matmul", 2);
  auto kernel = BackendNamed("mkl").Compile(request);
  ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
  const int before = set_local(3);  // the caller's own local count
  auto outputs = RunKernel(**kernel, request, RandomInputs(request, 1));
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  EXPECT_EQ(set_local(before), 3);
}

}  // namespace
}  // namespace collage::testing
