// Measuring candidates: a real library kernel gives a valid cost with its layouts; a
// candidate that does not compile, fails, throws or computes the wrong answer is recorded
// invalid with the reason, and the measurement itself never fails.
#include "cost/measure.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <random>

#include "broken_backends.h"
#include "collage/available_backends.h"
#include "cost/cache_scrub.h"
#include "cost/group_signature.h"
#include "cost/search_candidate.h"
#include "ops/graph_builder.h"
#include "runtime/kernel_runner.h"
#include "runtime/threading.h"

namespace collage {

Status RegisterNativeBackend(BackendRegistry& registry);

namespace {

using testing::Breakage;
using testing::BrokenBackend;

Graph ConvRelu() {
  GraphBuilder b("conv_relu");
  ValueId x = b.Input("x", DType::kFloat32, {1, 16, 14, 14});
  ValueId w = b.RandomNormal("w", {16, 16, 3, 3}, 0.1f);
  ValueId c = b.Node("Conv", {x, w}, {{"pads", {1, 1, 1, 1}}}, "conv");
  b.Output(b.Node("Relu", {c}, {}, "relu"), "y");
  auto g = std::move(b).Build();
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  return std::move(*g);
}

struct Prepared {
  CompileRequest request;
  std::vector<Tensor> inputs;
  std::vector<Tensor> reference;
};

Prepared Prepare(const Graph& graph, const SubGraph& nodes, const std::string& rule) {
  Prepared p;
  p.request = CompileRequest::For(graph, nodes, rule, 1);
  std::mt19937 rng(3);
  p.inputs = RandomInputs(p.request, rng);
  auto reference = RunReferenceGroup(p.request, p.inputs);
  EXPECT_TRUE(reference.ok());
  p.reference = std::move(*reference);
  return p;
}

MeasureSettings Quick() {
  MeasureSettings s;
  s.warmup_runs = 1;
  s.min_runs = 5;
  s.max_runs = 20;
  s.max_seconds = 0.1;
  return s;
}

TEST(MeasureTest, ALibraryKernelGetsAValidCostWithItsLayouts) {
  const BackendRegistry& registry = GlobalBackendRegistry();
  const Backend* onednn = registry.Find("onednn");
  if (onednn == nullptr) GTEST_SKIP() << "onednn is not built";
  Graph graph = ConvRelu();
  auto candidates = EnumerateSearchCandidates(graph, {"onednn"}, registry);
  ASSERT_TRUE(candidates.ok());
  int measured = 0;
  for (const SearchCandidate& c : *candidates) {
    if (c.backend != "onednn" || c.nodes.size() != 2) continue;
    Prepared p = Prepare(graph, c.nodes, c.rule);
    CostRecord record = MeasureCandidate(*onednn, p.request, registry, p.inputs, p.reference,
                                         ToleranceFor(graph, c.nodes), Quick());
    EXPECT_TRUE(record.valid) << c.rule << ": " << record.reason;
    EXPECT_GT(record.median_ms, 0);
    EXPECT_GE(record.p90_ms, record.median_ms);
    EXPECT_GE(record.samples, 5);
    EXPECT_EQ(record.input_layouts.size(), p.request.inputs.size());
    EXPECT_EQ(record.output_layouts.size(), p.request.outputs.size());
    ++measured;
  }
  EXPECT_GT(measured, 0) << "onednn offers no Conv+Relu group";
}

TEST(MeasureTest, EveryWayOfGoingWrongIsRecordedWithItsReason) {
  BackendRegistry registry;
  ASSERT_TRUE(RegisterNativeBackend(registry).ok());
  GraphBuilder b("relu");
  ValueId x = b.Input("x", DType::kFloat32, {1, 64});
  b.Output(b.Node("Relu", {x}, {}, "relu"), "y");
  auto graph = std::move(b).Build();
  ASSERT_TRUE(graph.ok());
  Prepared p = Prepare(*graph, SubGraph(1, {0}), "relu");
  const std::pair<Breakage, const char*> cases[] = {
      {Breakage::kCompileFails, "no implementation for this shape"},
      {Breakage::kWrongAnswer, "differs from the reference kernels"},
      {Breakage::kThrows, "exception while measuring: kernel blew up"},
      {Breakage::kRunFails, "run failed"},
  };
  for (const auto& [breakage, expected] : cases) {
    BrokenBackend backend("broken", breakage);
    CostRecord record = MeasureCandidate(backend, p.request, registry, p.inputs, p.reference, 1e-4, Quick());
    EXPECT_FALSE(record.valid) << expected;
    EXPECT_NE(record.reason.find(expected), std::string::npos) << "reason: " << record.reason;
  }
}

TEST(MeasureTest, TimingStopsAtTheCapsItIsGiven) {
  int calls = 0;
  auto run = [&] {
    ++calls;
    return Status();
  };
  MeasureSettings never_settles{.warmup_runs = 2, .min_runs = 5, .max_runs = 8, .max_seconds = 100, .target_spread = -1};
  CostRecord record = TimeRepeatedly(run, never_settles);
  EXPECT_TRUE(record.valid);
  EXPECT_EQ(calls, 2 + 8);
  EXPECT_EQ(record.samples, 8);
  calls = 0;
  MeasureSettings settles_at_once{.warmup_runs = 0, .min_runs = 5, .max_runs = 50, .max_seconds = 100, .target_spread = 1e9};
  record = TimeRepeatedly(run, settles_at_once);
  EXPECT_EQ(calls, 5);
  int failing_calls = 0;
  record = TimeRepeatedly([&] { return ++failing_calls > 3 ? Internal("boom") : Status(); }, settles_at_once);
  EXPECT_FALSE(record.valid);
  EXPECT_NE(record.reason.find("boom"), std::string::npos);
}

TEST(MeasureTest, ConversionsAreMeasuredLikeKernels) {
  const BackendRegistry& registry = GlobalBackendRegistry();
  TensorType type{DType::kFloat32, {1, 32, 28, 28}};
  CostRecord record = MeasureConversion(type, Layout::Plain(), Layout::ChannelsLast(), registry, Quick());
  EXPECT_TRUE(record.valid) << record.reason;
  EXPECT_GT(record.median_ms, 0);
  ASSERT_EQ(record.output_layouts.size(), 1u);
  EXPECT_EQ(record.output_layouts[0], Layout::ChannelsLast());
  CostRecord unknown = MeasureConversion(type, Layout::Opaque("nobody", "format", 1 << 20), Layout::Plain(), registry, Quick());
  EXPECT_FALSE(unknown.valid);
}

}  // namespace
}  // namespace collage

namespace collage {
namespace {

TEST(MeasureTest, AScrubbedMeasurementReadsTheInputsBackBeforeEveryRun) {
  MeasureSettings settings;
  settings.warmup_runs = 1;
  settings.min_runs = 4;
  settings.max_runs = 4;
  int runs = 0, prepared = 0;
  auto run = [&] {
    ++runs;
    return Status();
  };
  auto prepare = [&] { ++prepared; };
  CostRecord warm = TimeRepeatedly(run, settings, prepare);
  ASSERT_TRUE(warm.valid);
  EXPECT_EQ(prepared, 0);  // warm: nothing between the runs
  settings.scrub_bytes = 1 << 20;
  runs = 0;
  CostRecord scrubbed = TimeRepeatedly(run, settings, prepare);
  ASSERT_TRUE(scrubbed.valid);
  EXPECT_EQ(runs, 5);
  EXPECT_EQ(prepared, runs);  // before the warm-up run and before every timed one
}

TEST(MeasureTest, TheMethodIsPartOfTheCostKey) {
  MeasureSettings settings;
  const std::string wait = OpenMpWaitSetting();
  EXPECT_EQ(MeasureMethodKey(settings), "warm; " + wait + "; check 2");
  settings.scrub_bytes = size_t{64} << 20;
  EXPECT_EQ(MeasureMethodKey(settings), "scrub:64MiB; " + wait + "; check 2");
  settings.scrub_on_calling_thread = true;
  EXPECT_EQ(MeasureMethodKey(settings), "scrub:64MiB on the calling thread; " + wait + "; check 2");
  settings.scrub_bytes = 0;  // warm: no scrub, wherever it would run
  EXPECT_EQ(MeasureMethodKey(settings), "warm; " + wait + "; check 2");
}

TEST(MeasureTest, KernelsOnAPoolOfTheirOwnAreScrubbedOnTheCallingThread) {
  // The kernel libraries run on the calling thread's OpenMP team; the engines on pools of
  // their own, which a team spinning after a scrub on it would crowd.
  const BackendRegistry& registry = GlobalBackendRegistry();
  MeasureSettings settings;
  settings.scrub_bytes = 1 << 20;
  const Backend* native = registry.Find("native");
  ASSERT_NE(native, nullptr);
  EXPECT_FALSE(SettingsForBackend(settings, *native).scrub_on_calling_thread);
  int engines = 0;
  for (const char* name : {"onnxruntime", "openvino"}) {
    const Backend* engine = registry.Find(name);
    if (engine == nullptr) continue;  // not built here
    ++engines;
    EXPECT_TRUE(engine->has_own_thread_pool()) << name;
    EXPECT_TRUE(SettingsForBackend(settings, *engine).scrub_on_calling_thread) << name;
  }
  for (const char* name : {"onednn", "xnnpack", "xnnpack_graph", "eigen", "mkl", "openblas"}) {
    if (const Backend* library = registry.Find(name); library != nullptr) {
      EXPECT_FALSE(library->has_own_thread_pool()) << name;
    }
  }
  // The scrub itself runs either way, and a measurement with it stays valid.
  int runs = 0;
  settings.scrub_on_calling_thread = true;
  CostRecord record = TimeRepeatedly([&] {
    ++runs;
    return Status();
  }, settings);
  EXPECT_TRUE(record.valid);
  EXPECT_GT(runs, settings.warmup_runs);
  if (engines == 0) GTEST_SKIP() << "no engine backend built here";
}

TEST(MeasureTest, TheOpenMpWaitSettingIsPartOfTheMethod) {
  // The test binaries run under the policy's setting (the re-execution at start-up) unless
  // the environment chose one.
  const char* spin = std::getenv("GOMP_SPINCOUNT");
  const std::string saved = spin != nullptr ? spin : "";
  ASSERT_EQ(setenv("GOMP_SPINCOUNT", "123", 1), 0);
  EXPECT_EQ(MeasureMethodKey(MeasureSettings{}), "warm; GOMP_SPINCOUNT=123; check 2");
  ASSERT_EQ(unsetenv("GOMP_SPINCOUNT"), 0);
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  EXPECT_EQ(MeasureMethodKey(MeasureSettings{}),
            (policy != nullptr ? std::string("warm; OMP_WAIT_POLICY=") + policy
                               : "warm; libgomp default") +
                "; check 2");
  if (spin != nullptr) {
    ASSERT_EQ(setenv("GOMP_SPINCOUNT", saved.c_str(), 1), 0);
  }
}

TEST(MeasureTest, TheRunFootprintIsTheConstantsAndThePeakOfLiveValues) {
  // x -> relu -> relu -> relu -> y, 4 KiB each: at most two are live at once (a node's input
  // and output), so the run touches 8 KiB, however long the chain.
  GraphBuilder b("footprint");
  ValueId v = b.Input("x", DType::kFloat32, {1, 1024});
  for (int i = 0; i < 3; ++i) v = b.Node("Relu", {v}, {}, "relu" + std::to_string(i));
  b.Output(v, "y");
  auto chain = std::move(b).Build();
  ASSERT_TRUE(chain.ok());
  EXPECT_EQ(RunFootprintBytes(*chain), 2 * 1024 * sizeof(float));
  EXPECT_EQ(RunFootprintBytes(ConvRelu()), 16 * 16 * 3 * 3 * sizeof(float) + 2 * 16 * 14 * 14 * sizeof(float));
  EXPECT_GE(LastLevelCacheBytes(), size_t{1} << 20);
}

}  // namespace
}  // namespace collage
