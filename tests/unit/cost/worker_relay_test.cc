// `collage_measure_worker --relay`, as a Ray task runs it: a real process that answers each
// request with a full record, a crash or a hang killing its own worker and never the relay,
// which then measures the next request with a new one.
#include "cost/worker_relay.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include "../search/optimize_test_util.h"
#include "../util/sanitizer_build.h"
#include "collage/sdk/errors.h"
#include "cost/worker_measurer.h"
#include "cost/worker_protocol.h"
#include "quick_settings.h"
#include "test_paths.h"
#include "util/subprocess.h"

namespace collage {
namespace {

std::string PluginPath(const std::string& name) {
  return std::string(COLLAGE_TEST_PLUGIN_DIR) + "/" + name + "/lib" + name + "_plugin.so";
}

class Relay {
 public:
  explicit Relay(std::vector<std::string> args) {
    auto spawned = Subprocess::Spawn(COLLAGE_MEASURE_WORKER_PATH, args);
    EXPECT_TRUE(spawned.ok()) << spawned.status().ToString();
    if (spawned.ok()) process_ = std::move(*spawned);
  }
  // The next frame's payload, or "" when the relay ended or said nothing for 30 s.
  std::string Read() {
    const auto deadline = Subprocess::Clock::now() + std::chrono::seconds(30);
    std::string header, payload;
    if (!process_ || process_->Read(4, &header, deadline) != Subprocess::Wait::kDone) return "";
    auto size = FrameLength(header);
    if (!size.ok() || process_->Read(*size, &payload, deadline) != Subprocess::Wait::kDone)
      return "";
    return payload;
  }
  StatusOr<CostRecord> Ask(const std::string& request) {
    const auto deadline = Subprocess::Clock::now() + std::chrono::seconds(30);
    if (process_->Write(FrameHeader(request.size()) + request, deadline) != Subprocess::Wait::kDone)
      return IoError("the relay took no request");
    return DecodeFullRecord(Read());
  }
  Subprocess& process() { return *process_; }

 private:
  std::unique_ptr<Subprocess> process_;
};

TEST(WorkerRelayTest, ACrashOrAHangKillsTheRelaysWorkerAndComesBackAsAFullRecord) {
  Relay relay({"--relay", "--timeout", "1", "--plugin", PluginPath("segfaulting"), "--plugin",
               PluginPath("hanging")});
  // The hello is its worker's: the backends loaded there, not in the relay.
  auto hello = DecodeHello(relay.Read());
  ASSERT_TRUE(hello.ok()) << hello.status().ToString();
  EXPECT_EQ(hello->version, kWorkerProtocolVersion);
  EXPECT_EQ(HelloMismatch(*hello, {{"segfaulting", "misbehaving 1"}}), "");

  Graph graph = testing::RepeatedBlocks(1);
  const SubGraph relu(graph.num_nodes(), {1});
  ASSERT_EQ(graph.node(1).op_type, "Relu");
  auto job = [&](const std::string& backend, const std::string& rule) {
    auto payload = CandidateRequestPayload(CandidateJob{&graph, relu, backend, rule,
                                                        Precision::kFloat32, 1, 1e-4,
                                                        testing::QuickMeasureSettings()});
    EXPECT_TRUE(payload.ok());
    return *payload;
  };
  auto crashed = relay.Ask(job("segfaulting", "relu"));
  ASSERT_TRUE(crashed.ok()) << crashed.status().ToString();
  EXPECT_FALSE(crashed->valid);
  const std::string died = testing::kAddressSanitizer ? "died of SIGABRT" : "died of SIGSEGV";
  EXPECT_NE(crashed->reason.find(died), std::string::npos) << crashed->reason;
  EXPECT_EQ(crashed->timed_out_after_s, 0);
  EXPECT_FALSE(crashed->killed_from_outside);

  auto hung = relay.Ask(job("hanging", "relu"));
  ASSERT_TRUE(hung.ok()) << hung.status().ToString();
  EXPECT_FALSE(hung->valid);
  EXPECT_EQ(hung->timed_out_after_s, 1) << "what an 'R' could not carry";
  EXPECT_EQ(hung->reason, "timed out after 1 s (the measurement worker was killed)");

  auto measured = relay.Ask(job("native", "op"));
  ASSERT_TRUE(measured.ok()) << measured.status().ToString();
  EXPECT_TRUE(measured->valid) << measured->reason;

  // One relay all along; it ends at the end of its input.
  relay.process().CloseStdin();
  EXPECT_EQ(relay.process().WaitForExit(std::chrono::seconds(10)), "exited with status 0");
}

TEST(WorkerRelayTest, ATimeLimitItCannotUseEndsTheRelayWithTheReason) {
  Relay relay({"--relay", "--timeout", "0"});
  EXPECT_EQ(relay.Read(), "");
  EXPECT_EQ(relay.process().WaitForExit(std::chrono::seconds(10)), "exited with status 2");
  EXPECT_NE(relay.process().stderr_tail().find("--timeout"), std::string::npos)
      << relay.process().stderr_tail();
}

}  // namespace
}  // namespace collage
