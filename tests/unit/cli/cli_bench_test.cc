// `collage bench` as a user of a benchmark tool meets it: load, compile and first-inference
// times, throughput from concurrent streams, a duration limit, enough runs by default that p99
// is not the slowest run, and every figure in a JSON file.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli_test_util.h"

namespace collage {
namespace {

using testing::CliTest;
using testing::CommandResult;
using testing::ReadAll;
using testing::RunCli;

TEST_F(CliTest, BenchReportsLoadFirstInferenceThroughputAndLatency) {
  CommandResult r = RunCli("bench " + WriteTinyModel() + " --threads 1 --iterations 120");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* expected : {"threads: 1  streams: 1", "load: ", "(import ", ", compile ",
                               "first inference: ", "runs: 120 in ", "throughput: ",
                               "inferences/s", "latency: p50 ", " p95 ", " p99 ", " max "}) {
    EXPECT_NE(r.output.find(expected), std::string::npos) << expected << "\n" << r.output;
  }
  // 120 runs: p99 is not the slowest one, so no note says it is.
  EXPECT_EQ(r.output.find("p99 is the slowest run"), std::string::npos) << r.output;

  r = RunCli("bench " + WriteTinyModel() + " --iterations 5");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("with 5 runs p99 is the slowest run"), std::string::npos) << r.output;
}

TEST_F(CliTest, BenchDefaultsToEnoughRunsForARealP99) {
  CommandResult r = RunCli("bench " + WriteTinyModel() + " --threads 1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("runs: 200 in "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("limit: 200 runs or 20 s, whichever first"), std::string::npos) << r.output;
}

TEST_F(CliTest, BenchStreamsForADurationWriteEveryFigureAsJson) {
  const std::string json_path = (dir_ / "bench.json").string();
  CommandResult r = RunCli("bench " + WriteTinyModel() +
                           " --threads 1 --streams 2 --duration 300ms --json " + json_path);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("streams: 2"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("limit: 0.3 s"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("results written to " + json_path), std::string::npos) << r.output;

  nlohmann::json j = nlohmann::json::parse(ReadAll(json_path), nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << ReadAll(json_path);
  EXPECT_EQ(j["streams"], 2);
  EXPECT_EQ(j["threads"], 1);
  EXPECT_EQ(j["placement"], "single-backend:native");
  EXPECT_TRUE(j["plan"].is_null());
  EXPECT_DOUBLE_EQ(j["limits"]["seconds"].get<double>(), 0.3);
  EXPECT_EQ(j["limits"]["runs"], 0);
  const int runs = j["runs"].get<int>();
  EXPECT_GT(runs, 2);  // a Relu and an Add on 4 floats: thousands fit in 0.3 s
  const double wall = j["wall_seconds"].get<double>();
  EXPECT_GE(wall, 0.3);
  EXPECT_LT(wall, 30.0);
  EXPECT_NEAR(j["throughput_per_second"].get<double>(), runs / wall, 1e-6 * runs / wall);
  const auto& latency = j["latency_ms"];
  for (const char* key : {"min", "mean", "stddev", "p50", "p90", "p95", "p99", "max"}) {
    ASSERT_TRUE(latency.contains(key)) << key;
    EXPECT_GE(latency[key].get<double>(), 0.0) << key;
  }
  EXPECT_LE(latency["min"].get<double>(), latency["p50"].get<double>());
  EXPECT_LE(latency["p50"].get<double>(), latency["p99"].get<double>());
  EXPECT_LE(latency["p99"].get<double>(), latency["max"].get<double>());
  EXPECT_EQ(j["p99_is_max"].get<bool>(), runs < 100);
  EXPECT_GT(j["load_ms"]["import"].get<double>(), 0.0);
  EXPECT_GT(j["load_ms"]["compile"].get<double>(), 0.0);
  EXPECT_NEAR(j["load_ms"]["total"].get<double>(),
              j["load_ms"]["import"].get<double>() + j["load_ms"]["compile"].get<double>(), 1e-9);
  EXPECT_GT(j["first_inference_ms"].get<double>(), 0.0);
  EXPECT_EQ(j["inputs"][0]["name"], "x");
  EXPECT_EQ(j["inputs"][0]["shape"], nlohmann::json({1, 4}));
  EXPECT_EQ(j["outputs"][0]["dtype"], "float32");
  // A Relu and an Add on 4 floats: 8 operations a run; two streams of one thread each, so the
  // CPU's peak is measured at two threads where it has two cores.
  const auto& compute = j["compute"];
  ASSERT_TRUE(compute.is_object()) << j.dump(2);
  EXPECT_NEAR(compute["gflop_per_run"].get<double>(), 8e-9, 1e-15);
  EXPECT_NEAR(compute["gflops"].get<double>(),
              compute["gflop_per_run"].get<double>() * j["throughput_per_second"].get<double>(),
              1e-6 * compute["gflops"].get<double>());
  EXPECT_EQ(compute["peak_threads"],
            std::min(2u, std::max(1u, std::thread::hardware_concurrency())));
#if defined(__x86_64__)
  EXPECT_GT(compute["fp32_peak_gflops"].get<double>(), 0.5);
  EXPECT_FALSE(compute["peak_isa"].get<std::string>().empty());
  EXPECT_NEAR(compute["share_of_peak"].get<double>(),
              compute["gflops"].get<double>() / compute["fp32_peak_gflops"].get<double>(), 1e-9);
#endif
  EXPECT_NE(r.output.find("compute: 8 FLOP per run, "), std::string::npos) << r.output;
  EXPECT_FALSE(j["machine"].get<std::string>().empty());
  EXPECT_FALSE(j["versions"]["collage"].get<std::string>().empty());
  EXPECT_TRUE(j["versions"]["backends"].contains("native"));
  EXPECT_TRUE(j["versions"]["backends_not_built"].is_object());
}

TEST_F(CliTest, BenchMakesOneRunHoweverShortTheDuration) {
  // MobileNetV2 on the reference kernels takes far longer than 1 ms a run.
  const std::string model = (dir_ / "mobilenetv2.onnx").string();
  ASSERT_EQ(RunCli("zoo export mobilenetv2 -o " + model).exit_code, 0);
  CommandResult r = RunCli("bench " + model + " --threads 1 --warmup 0 --duration 1ms --profile");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("runs: 1 in "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("time per backend and kernel"), std::string::npos) << r.output;
}

// A duration bounds the warm-up too: a hundred million warm-up runs stop with it.
TEST_F(CliTest, BenchWarmUpKeepsWithinTheDuration) {
  const std::string model = WriteTinyModel();
  const auto start = std::chrono::steady_clock::now();
  CommandResult r = RunCli("bench " + model + " --threads 1 --warmup 100000000 --duration 500ms");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_LT(seconds, 30.0) << r.output;
}

TEST_F(CliTest, BenchRefusesWhatItCannotMeasure) {
  const std::string model = WriteTinyModel();
  struct Case {
    std::string args;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {"--streams 0", "--streams must be >= 1"},
           {"--iterations 0", "--iterations must be >= 1"},
           {"--iterations -1", "--iterations must be >= 1"},
           {"--duration soon", "--duration 'soon': expected a positive time"},
           {"--duration 0s", "--duration '0s'"},
           {"--streams 2 --profile", "use --streams 1"},
           // A thousand threads each running the model: refused, not an abort when one
           // cannot start.
           {"--streams 1000", "more than this machine can run at once"},
           {"--json " + dir_.string(), "directory"},
       }) {
    CommandResult r = RunCli("bench " + model + " " + c.args);
    EXPECT_EQ(r.exit_code, 1) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.message), std::string::npos) << c.args << "\n" << r.output;
  }
}

}  // namespace
}  // namespace collage
