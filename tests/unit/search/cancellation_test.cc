// Cancelling an optimize: the token passed with the call stops that optimize with kCancelled,
// keeping what it measured, and nothing else; copies share the token; a signal cancels the
// token CancelOnSignals was given.
#include "collage/cancellation.h"

#include <gtest/gtest.h>

#include <csignal>
#include <thread>

#include "collage/available_backends.h"
#include "optimize_test_util.h"
#include "search/optimizer.h"

namespace collage {
namespace {

using testing::QuickOptimize;
using testing::RepeatedBlocks;
using testing::TempDir;

TEST(CancellationTest, CopiesShareOneState) {
  const CancellationToken token;
  const CancellationToken copy = token;
  const CancellationToken other;
  EXPECT_FALSE(copy.cancelled());
  std::thread([token] { token.Cancel(); }).join();
  EXPECT_TRUE(token.cancelled());
  EXPECT_TRUE(copy.cancelled());
  EXPECT_FALSE(other.cancelled());
}

TEST(CancellationTest, ACancelledOptimizeStopsAndTheNextOneRuns) {
  TempDir dir;
  const Graph graph = RepeatedBlocks(2);
  OptimizeOptions cancelled = QuickOptimize(dir.file("costs.sqlite"));
  cancelled.workers = MeasureWorkers::InProcess();
  cancelled.cancel.Cancel();
  StatusOr<OptimizeResult> stopped = OptimizePlacement(graph, GlobalBackendRegistry(), 1, cancelled);
  ASSERT_FALSE(stopped.ok());
  EXPECT_EQ(stopped.status().code(), StatusCode::kCancelled) << stopped.status().ToString();

  // The same process, a new token: the cancellation stopped one optimize, not the process.
  OptimizeOptions fresh = cancelled;
  fresh.cancel = CancellationToken();
  StatusOr<OptimizeResult> ran = OptimizePlacement(graph, GlobalBackendRegistry(), 1, fresh);
  ASSERT_TRUE(ran.ok()) << ran.status().ToString();
  EXPECT_FALSE(ran->placement.groups.empty());
}

TEST(CancellationTest, TheFirstSignalCancelsTheTokenGivenLast) {
  const CancellationToken earlier;
  const CancellationToken latest;
  CancelOnSignals(earlier);
  CancelOnSignals(latest);
  ASSERT_EQ(std::raise(SIGTERM), 0);
  EXPECT_TRUE(latest.cancelled());
  EXPECT_FALSE(earlier.cancelled());
  // The handler gave SIGTERM its default action back (a second one ends the process); SIGINT
  // still has the handler: restore it too.
  EXPECT_EQ(std::signal(SIGTERM, SIG_DFL), SIG_DFL);
  std::signal(SIGINT, SIG_DFL);
}

}  // namespace
}  // namespace collage
