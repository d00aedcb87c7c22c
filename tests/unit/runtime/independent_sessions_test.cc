// Two sessions in one process with different thread counts, running at the same time, do not
// disturb each other (issue 13): no run resizes or destroys a thread pool another run uses,
// so both finish, with the reference's outputs. A hang is the failure this guards against,
// so the runs are watched: past the deadline the test fails and ends the process instead of
// hanging the suite (the stuck threads cannot be joined).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <memory>
#include <random>
#include <thread>

#include "../search/optimize_test_util.h"
#include "collage/available_backends.h"
#include "collage/normalized_error.h"
#include "collage/random_tensor.h"
#include "collage/sdk/backend.h"
#include "collage/session.h"
#include "session/session_access.h"

namespace collage {
namespace {

using testing::QuickOptimize;
using testing::TempDir;

constexpr int kRuns = 50;
constexpr auto kDeadline = std::chrono::seconds(60);

std::unique_ptr<Session> MakeSession(const std::string& backend, int threads) {
  SessionOptions options;
  options.backend = backend;
  options.num_threads = threads;
  // Four Conv → Relu → residual Add blocks at 16x32x32, large enough (~1 ms a run on one
  // core) that the two sessions' runs overlap and XNNPACK's pools are used with several threads.
  auto session = SessionAccess::FromGraph(testing::RepeatedBlocks(4, 3, 16, 32), options);
  EXPECT_TRUE(session.ok()) << backend << ": " << session.status().ToString();
  return session.ok() ? std::move(*session) : nullptr;
}

std::map<std::string, Tensor> Inputs(const Session& session) {
  std::mt19937 rng(7);
  std::map<std::string, Tensor> inputs;
  for (const TensorInfo& info : session.inputs()) {
    inputs[info.name] = RandomTensor(info.dtype, info.shape, rng);
  }
  return inputs;
}

// Runs each session kRuns times, all sessions at once, one std::thread each; returns how many
// runs failed or disagreed with `expected`. Ends the process when the runs outlive kDeadline.
int RunTogether(const std::vector<Session*>& sessions, const std::map<std::string, Tensor>& inputs,
                const Tensor& expected) {
  std::vector<std::future<int>> done;
  std::atomic<int> waiting{static_cast<int>(sessions.size())};
  for (Session* session : sessions) {
    std::packaged_task<int()> task([session, &inputs, &expected, &waiting] {
      // Every thread starts running when all have started, so that the runs overlap.
      waiting.fetch_sub(1);
      while (waiting.load() > 0) std::this_thread::yield();
      int bad = 0;
      for (int r = 0; r < kRuns; ++r) {
        auto out = session->Run(inputs);
        if (!out.ok() || NormalizedError(out->at("y"), expected) > 1e-4) ++bad;
      }
      return bad;
    });
    done.push_back(task.get_future());
    // Detached: a hung run must not be joined (that would hang the suite in its place).
    std::thread(std::move(task)).detach();
  }
  const auto deadline = std::chrono::steady_clock::now() + kDeadline;
  int bad = 0;
  for (std::future<int>& f : done) {
    if (f.wait_until(deadline) != std::future_status::ready) {
      ADD_FAILURE() << sessions.size() << " concurrent sessions did not finish " << kRuns
                    << " runs each within " << kDeadline.count() << " s: a hang";
      std::fflush(stdout);
      std::fflush(stderr);
      // Sessions in use by stuck threads cannot be destroyed: end here, reporting failure.
      std::_Exit(1);
    }
    bad += f.get();
  }
  return bad;
}

void ExpectIndependent(const std::string& backend) {
  if (GlobalBackendRegistry().Find(backend) == nullptr) {
    GTEST_SKIP() << backend << " is not built";
  }
  std::unique_ptr<Session> reference = MakeSession("native", 1);
  std::unique_ptr<Session> one = MakeSession(backend, 1);
  std::unique_ptr<Session> two = MakeSession(backend, 2);
  ASSERT_TRUE(reference && one && two);
  // The convolutions are the backend's (what is left runs on native).
  EXPECT_NE(two->DescribePlacement().find(backend), std::string::npos) << two->DescribePlacement();
  const auto inputs = Inputs(*reference);
  auto expected = reference->Run(inputs);
  ASSERT_TRUE(expected.ok()) << expected.status().ToString();
  EXPECT_EQ(RunTogether({one.get(), two.get()}, inputs, expected->at("y")), 0) << backend;
}

TEST(IndependentSessionsTest, XnnpackWithOneAndTwoThreadsRunTogether) {
  ExpectIndependent("xnnpack");
}

TEST(IndependentSessionsTest, XnnpackGraphWithOneAndTwoThreadsRunTogether) {
  ExpectIndependent("xnnpack_graph");
}

TEST(IndependentSessionsTest, OnednnWithOneAndTwoThreadsRunTogether) {
  ExpectIndependent("onednn");
}

TEST(IndependentSessionsTest, OpenblasWithOneAndTwoThreadsRunTogether) {
  ExpectIndependent("openblas");
}

// Placements the search chose, over several libraries, at 1 and 2 threads.
TEST(IndependentSessionsTest, OptimizedSessionsRunTogether) {
  TempDir dir;
  std::unique_ptr<Session> reference = MakeSession("native", 1);
  std::unique_ptr<Session> one = MakeSession("native", 1);
  std::unique_ptr<Session> two = MakeSession("native", 2);
  ASSERT_TRUE(reference && one && two);
  OptimizeOptions options = QuickOptimize(dir.file("costs.sqlite"));
  for (const char* name : {"xnnpack", "onednn", "openblas", "eigen"}) {
    // The sanitizer build leaves openblas out.
    if (GlobalBackendRegistry().Find(name) != nullptr) options.backends.push_back(name);
  }
  ASSERT_TRUE(one->Optimize(options).ok());
  ASSERT_TRUE(two->Optimize(options).ok());
  const auto inputs = Inputs(*reference);
  auto expected = reference->Run(inputs);
  ASSERT_TRUE(expected.ok()) << expected.status().ToString();
  EXPECT_EQ(RunTogether({one.get(), two.get()}, inputs, expected->at("y")), 0)
      << one->DescribePlacement() << "\n"
      << two->DescribePlacement();
}

}  // namespace
}  // namespace collage
