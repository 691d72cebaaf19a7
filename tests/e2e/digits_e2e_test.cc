// The digits-libtorch example on a real cluster: a master and two agents with
// one CPU slot each, so a trial's two ranks run under different agents, meet
// through the master's rendezvous and average gradients over Gloo. The
// example config completes with at least 95% validation accuracy (computed
// on disjoint shards and summed over the ranks) and both ranks end with the
// same parameters; a trial paused midway checkpoints, stops on both ranks
// and, activated again, ends with exactly the parameters and accuracy of an
// uninterrupted run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "tests/e2e/digits_harness.h"

namespace ring::testing::digits_e2e {
namespace {

using namespace std::chrono_literals;
using namespace digits;

class DigitsE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = WhyNotRunnable(); !why.empty()) GTEST_SKIP() << why;
    model_ = ModelDir();
    cluster_.StartMaster();
    cluster_.StartAgent("agent-1", 1);
    cluster_.StartAgent("agent-2", 1);
  }

  int64_t Submit(const std::string& config) { return digits::Submit(cluster_, config, model_); }
  void WaitCompleted(int64_t exp) { digits::WaitCompleted(cluster_, exp); }
  int64_t TrialOf(int64_t exp) { return digits::TrialOf(cluster_, exp); }
  Outcome Result(int64_t exp) { return digits::Result(cluster_, exp); }
  std::string Config(const std::string& name, const std::string& hparams) {
    return digits::Config(cluster_, name, {.hparams = hparams});
  }

  TestCluster cluster_;
  std::string model_;
};

TEST_F(DigitsE2E, TwoRanksOnTwoAgentsTrainToNinetyFivePercentValidationAccuracy) {
  const int64_t exp = Submit(SourceDir() + "/configs/experiments/digits-libtorch.yaml");
  ASSERT_GT(exp, 0);
  WaitCompleted(exp);
  const Outcome out = Result(exp);
  const auto trial = cluster_.GetJson("/api/v1/trials/" + std::to_string(out.trial));
  EXPECT_EQ(trial["restarts"], 0);
  EXPECT_EQ(out.length, 300);

  // One allocation whose two ranks ran on the two agents.
  auto allocations =
      cluster_.GetJson("/api/v1/trials/" + std::to_string(out.trial) + "/allocations")["allocations"];
  ASSERT_EQ(allocations.size(), 1u) << allocations.dump();
  EXPECT_EQ(allocations[0]["exit_code"], 0) << allocations[0].dump();
  const auto& placements = allocations[0]["placements"];
  ASSERT_EQ(placements.size(), 2u) << allocations[0].dump();
  EXPECT_NE(placements[0]["agent_id"], placements[1]["agent_id"]) << allocations[0].dump();

  // The searcher metric at the end: at least 95% of the 300 validation images.
  ASSERT_FALSE(out.validation.empty());
  EXPECT_EQ(out.validation.back()["batches"], 300) << out.validation.dump();
  const double accuracy = out.validation.back()["metrics"]["validation_accuracy"].get<double>();
  EXPECT_GE(accuracy, 0.95) << out.validation.dump();
  EXPECT_NEAR(out.validation.back()["metrics"]["validation_error"].get<double>(), 1 - accuracy, 1e-12);
  // Each accuracy is a whole number of the 300 images: the shards' counts were summed.
  double best = 0;
  for (const auto& v : out.validation) {
    const double correct = v["metrics"]["validation_accuracy"].get<double>() * 300;
    EXPECT_NEAR(correct, std::round(correct), 1e-6) << v.dump();
    best = std::max(best, v["metrics"]["validation_accuracy"].get<double>());
  }
  // validation_accuracy is bigger-is-better: the best validation is the highest one.
  EXPECT_DOUBLE_EQ(trial["best_validation"].get<double>(), best) << trial.dump();
  ASSERT_GE(out.training.size(), 2u) << out.training.dump();
  EXPECT_LT(out.training.back()["metrics"]["loss"].get<double>(),
            out.training[0]["metrics"]["loss"].get<double>());

  // Both ranks joined a Gloo group of 2, and ended with identical parameters.
  EXPECT_EQ(out.joined, (std::set<int>{0, 1}));
  ASSERT_EQ(out.digests.size(), 2u);
  EXPECT_EQ(out.digests.at(0), out.digests.at(1)) << "the ranks' parameters diverged";
}

TEST_F(DigitsE2E, PausedMidwayResumesBothRanksToTheSameParametersAsAnUninterruptedRun) {
  const int64_t baseline = Submit(Config("baseline", ""));
  ASSERT_GT(baseline, 0);
  WaitCompleted(baseline);
  const Outcome want = Result(baseline);
  ASSERT_EQ(want.digests.size(), 2u);

  // The same trial slowed down (no effect on results), paused after its first checkpoint.
  const int64_t exp = Submit(Config("paused", "  batch_sleep_ms: 40\n"));
  ASSERT_GT(exp, 0);
  const int64_t trial = TrialOf(exp);
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        const auto list = cluster_.GetJson("/api/v1/trials/" + std::to_string(trial) + "/checkpoints");
        return !list.value("checkpoints", nlohmann::json::array()).empty();
      },
      60s));
  auto paused = cluster_.Ring({"experiment", "pause", std::to_string(exp)});
  ASSERT_EQ(paused.exit_code, 0) << paused.err;
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] { return cluster_.GetJson("/api/v1/trials/" + std::to_string(trial))["state"] == "PAUSED"; }, 60s));
  ASSERT_EQ(cluster_.Ring({"experiment", "activate", std::to_string(exp)}).exit_code, 0);
  WaitCompleted(exp);

  const Outcome got = Result(exp);
  EXPECT_EQ(got.stopped, (std::set<int>{0, 1})) << "both ranks stopped at the same step";
  auto allocations =
      cluster_.GetJson("/api/v1/trials/" + std::to_string(trial) + "/allocations")["allocations"];
  ASSERT_EQ(allocations.size(), 2u) << allocations.dump();
  for (const auto& a : allocations) EXPECT_EQ(a["exit_code"], 0) << a.dump();
  EXPECT_EQ(cluster_.GetJson("/api/v1/trials/" + std::to_string(trial))["restarts"], 0);
  ASSERT_EQ(got.digests.size(), 2u);
  EXPECT_EQ(got.digests.at(0), want.digests.at(0))
      << "resumed ranks ended elsewhere than an uninterrupted run";
  EXPECT_EQ(got.digests.at(1), want.digests.at(1));
  ASSERT_FALSE(got.validation.empty());
  EXPECT_EQ(got.validation.back()["metrics"], want.validation.back()["metrics"]);  // bitwise
  EXPECT_EQ(Values(got.training), Values(want.training));
}

}  // namespace
}  // namespace ring::testing::digits_e2e
