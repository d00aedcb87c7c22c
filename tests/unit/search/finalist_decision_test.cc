// The end-to-end decision between finalists, on synthetic run times (a stand-in for whole
// plans, so that the statistics are tested and not the machine): the faster of two is kept,
// a tie keeps the earlier one, undecided pairs get more rounds, errors end the decision.
#include "search/finalist_decision.h"

#include <gtest/gtest.h>

#include <random>

namespace collage {
namespace {

// Finalist i takes means[i] ms with multiplicative noise of `noise` (uniform), plus a drift
// shared by every finalist measured in the same stretch of time (the machine's state).
struct SyntheticRuns {
  std::vector<double> means;
  double noise = 0.05;
  std::mt19937 rng{7};
  int calls = 0;
  StatusOr<double> operator()(size_t i) {
    ++calls;
    const double drift = 1.0 + 0.5 * std::sin(calls / 7.0);  // a slow machine-wide swing
    std::uniform_real_distribution<double> jitter(1 - noise, 1 + noise);
    return means[i] * drift * jitter(rng);
  }
};

TEST(FinalistDecisionTest, KeepsTheFasterOfTwo) {
  for (size_t faster : {0u, 1u}) {
    SyntheticRuns runs;
    runs.means = {10.0, 10.0};
    runs.means[faster] = 9.0;
    auto result = DecideBetweenFinalists(2, std::ref(runs), DecisionOptions());
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    EXPECT_EQ(result->kept, faster);
    EXPECT_NEAR(result->ratio_to_kept[1 - faster], 10.0 / 9.0, 0.03);
    EXPECT_DOUBLE_EQ(result->ratio_to_kept[faster], 1.0);
    EXPECT_GT(result->rounds_won[faster], result->rounds_won[1 - faster]);
  }
}

TEST(FinalistDecisionTest, ATieKeepsTheEarlierFinalist) {
  SyntheticRuns runs;
  runs.means = {10.0, 10.0, 10.0};
  auto result = DecideBetweenFinalists(3, std::ref(runs), DecisionOptions());
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->kept, 0u);
  for (double ratio : result->ratio_to_kept) EXPECT_NEAR(ratio, 1.0, 0.02);
}

TEST(FinalistDecisionTest, AFinalistWithinTheNoiseGetsMoreRounds) {
  // 2% apart under 10% noise: not decided by the first 15 rounds, so more are run.
  SyntheticRuns runs;
  runs.means = {10.0, 9.8};
  runs.noise = 0.10;
  DecisionOptions options;
  options.min_rounds = 15;
  options.max_rounds = 60;
  auto result = DecideBetweenFinalists(2, std::ref(runs), options);
  ASSERT_TRUE(result.ok());
  EXPECT_GT(result->rounds, 15);
  EXPECT_LE(result->rounds, 60);
  // A clear difference is settled by the first rounds.
  SyntheticRuns clear;
  clear.means = {10.0, 5.0};
  auto quick = DecideBetweenFinalists(2, std::ref(clear), options);
  ASSERT_TRUE(quick.ok());
  EXPECT_EQ(quick->rounds, 15);
  EXPECT_EQ(quick->kept, 1u);
}

TEST(FinalistDecisionTest, NeverKeepsOneThatMeasuredClearlySlower) {
  // Whatever the seed, the kept finalist is never more than the tie tolerance slower than
  // the leader.
  for (unsigned seed = 0; seed < 20; ++seed) {
    SyntheticRuns runs;
    runs.rng.seed(seed);
    runs.means = {10.0, 9.7, 10.3, 9.95};
    DecisionOptions options;
    auto result = DecideBetweenFinalists(4, std::ref(runs), options);
    ASSERT_TRUE(result.ok());
    for (double ratio : result->ratio_to_kept)
      EXPECT_GE(ratio, 1.0 - options.tie_tolerance - 1e-9) << seed;
  }
}

TEST(FinalistDecisionTest, AFinalistFarBehindStopsRunning) {
  SyntheticRuns runs;
  runs.means = {10.0, 30.0, 10.5};
  std::vector<int> calls(3, 0);
  auto counted = [&](size_t i) -> StatusOr<double> {
    ++calls[i];
    return runs(i);
  };
  DecisionOptions options;
  options.warmup_rounds = 0;
  auto result = DecideBetweenFinalists(3, counted, options);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->kept, 0u);
  EXPECT_EQ(calls[1], 3);  // out after three rounds three times behind
  EXPECT_EQ(result->rounds_run[1], 3);
  EXPECT_EQ(result->rounds_run[0], result->rounds);
  EXPECT_NEAR(result->ratio_to_kept[1], 3.0, 0.3);
}

TEST(FinalistDecisionTest, ARunErrorEndsTheDecision) {
  int calls = 0;
  auto failing = [&](size_t i) -> StatusOr<double> {
    if (++calls > 5 && i == 1) return Status(StatusCode::kInternal, "device lost");
    return 1.0;
  };
  auto result = DecideBetweenFinalists(2, failing, DecisionOptions());
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("device lost"), std::string::npos);
}

TEST(FinalistDecisionTest, SignTestTails) {
  EXPECT_DOUBLE_EQ(SignTestPValue(0, 10), 1.0);
  EXPECT_NEAR(SignTestPValue(10, 10), 1.0 / 1024, 1e-12);
  EXPECT_NEAR(SignTestPValue(9, 10), 11.0 / 1024, 1e-12);
  EXPECT_NEAR(SignTestPValue(5, 10), 638.0 / 1024, 1e-12);
}

TEST(FinalistDecisionTest, ADecisionOnABusyMachineIsSaidToBeUncertain) {
  EXPECT_EQ(NoisyDecisionWarning(0.04), "");
  EXPECT_EQ(NoisyDecisionWarning(kNoisyDecisionSpread), "");
  const std::string busy = NoisyDecisionWarning(2.64);
  EXPECT_NE(busy.find("spread 264%"), std::string::npos) << busy;
  EXPECT_NE(busy.find("run optimize again on a quiet machine"), std::string::npos) << busy;
  // Runs that swing by half their time between rounds (SyntheticRuns' drift) spread beyond
  // the bound; steady ones do not.
  SyntheticRuns swinging;
  swinging.means = {10.0, 12.0};
  auto result = DecideBetweenFinalists(2, std::ref(swinging), DecisionOptions());
  ASSERT_TRUE(result.ok());
  EXPECT_GT(result->kept_spread, kNoisyDecisionSpread);
  EXPECT_NE(NoisyDecisionWarning(result->kept_spread), "");
}

}  // namespace
}  // namespace collage
