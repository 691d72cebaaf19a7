// The digits-libtorch example across "machines": the master and two agents
// each in a network namespace of their own (deploy/netns-cluster.sh), so the
// trial's two ranks see different addresses and meet over the bridge as they
// would over a network. The example trains to at least 95% validation
// accuracy; with one rank SIGKILLed midway, the master stops the other, the
// gang restarts from the last checkpoint and ends with exactly the
// parameters and accuracy of an uninterrupted run.
#include <gtest/gtest.h>
#include <signal.h>

#include <memory>
#include <set>
#include <string>

#include "tests/e2e/digits_harness.h"
#include "tests/support/netns_cluster.h"

namespace ring::testing::digits_netns_e2e {
namespace {

using namespace std::chrono_literals;
using namespace digits;

class DigitsNetnsE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = WhyNotRunnable(); !why.empty()) GTEST_SKIP() << why;
    if (auto why = NetnsCluster::WhyUnavailable(); !why.empty())
      GTEST_SKIP() << "network namespaces are not available here: " << why;
    nodes_ = std::make_unique<NetnsCluster>(3);  // master, agent-1, agent-2
    ASSERT_TRUE(nodes_->ok()) << nodes_->error();
    cluster_ = std::make_unique<TestCluster>();
    cluster_->StartMaster({.host = nodes_->address(0), .launcher = nodes_->launcher(0)});
    cluster_->StartAgent("agent-1", 1, {.launcher = nodes_->launcher(1)});
    cluster_->StartAgent("agent-2", 1, {.launcher = nodes_->launcher(2)});
  }

  void TearDown() override {
    cluster_.reset();  // every process stops before its namespace goes
    nodes_.reset();
  }

  // Where each rank of the trial's allocations ran: agent id -> address.
  std::set<std::string> RankAddresses(int64_t trial) {
    std::set<std::string> seen;
    auto agents = cluster_->GetJson("/api/v1/agents")["agents"];
    auto allocations = cluster_->GetJson("/api/v1/trials/" + std::to_string(trial) + "/allocations");
    for (const auto& a : allocations["allocations"])
      for (const auto& p : a["placements"])
        for (const auto& agent : agents)
          if (agent["id"] == p["agent_id"]) seen.insert(agent.value("address", ""));
    return seen;
  }

  std::unique_ptr<NetnsCluster> nodes_;
  std::unique_ptr<TestCluster> cluster_;
};

TEST_F(DigitsNetnsE2E, TwoRanksOnAgentsOfTheirOwnAddressesReachNinetyFivePercent) {
  const int64_t exp =
      Submit(*cluster_, SourceDir() + "/configs/experiments/digits-libtorch.yaml", ModelDir());
  ASSERT_GT(exp, 0);
  WaitCompleted(*cluster_, exp);
  const Outcome out = Result(*cluster_, exp);
  EXPECT_EQ(out.length, 300);
  EXPECT_EQ(RankAddresses(out.trial), (std::set<std::string>{nodes_->address(1), nodes_->address(2)}));

  ASSERT_FALSE(out.validation.empty());
  EXPECT_EQ(out.validation.back()["batches"], 300) << out.validation.dump();
  EXPECT_GE(out.validation.back()["metrics"]["validation_accuracy"].get<double>(), 0.95)
      << out.validation.dump();
  EXPECT_EQ(out.joined, (std::set<int>{0, 1}));
  ASSERT_EQ(out.digests.size(), 2u);
  EXPECT_EQ(out.digests.at(0), out.digests.at(1)) << "the ranks' parameters diverged";
}

TEST_F(DigitsNetnsE2E, OneRankKilledMidwayRestartsTheGangFromItsCheckpointToTheSameResult) {
  const int64_t baseline = Submit(*cluster_, Config(*cluster_, "baseline", {.max_restarts = 1}), ModelDir());
  ASSERT_GT(baseline, 0);
  WaitCompleted(*cluster_, baseline);
  const Outcome want = Result(*cluster_, baseline);
  ASSERT_EQ(want.digests.size(), 2u);

  // The same trial, slowed down (no effect on results); each rank leaves its
  // pid (the shell execs run.sh, which execs the trial binary).
  const std::string pids = cluster_->dir();
  const int64_t exp =
      Submit(*cluster_,
             Config(*cluster_, "killed",
                    {.hparams = "  batch_sleep_ms: 40\n",
                     .entrypoint = "echo $$ > " + pids + "/pid-$RING_ALLOCATION_ID-$RANK; exec sh run.sh",
                     .max_restarts = 1}),
             ModelDir());
  ASSERT_GT(exp, 0);
  const int64_t trial = TrialOf(*cluster_, exp);
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        const auto list = cluster_->GetJson("/api/v1/trials/" + std::to_string(trial) + "/checkpoints");
        return !list.value("checkpoints", nlohmann::json::array()).empty();
      },
      60s));
  const std::string pid_text = ReadFileText(pids + "/pid-" + std::to_string(trial) + ".0-1");
  ASSERT_FALSE(pid_text.empty()) << "rank 1 left no pid";
  ASSERT_EQ(::kill(std::stoi(pid_text), SIGKILL), 0);
  WaitCompleted(*cluster_, exp);

  const Outcome got = Result(*cluster_, exp);
  EXPECT_EQ(cluster_->GetJson("/api/v1/trials/" + std::to_string(trial))["restarts"], 1);
  auto allocations =
      cluster_->GetJson("/api/v1/trials/" + std::to_string(trial) + "/allocations")["allocations"];
  ASSERT_EQ(allocations.size(), 2u) << allocations.dump();
  EXPECT_NE(allocations[0]["exit_code"], 0) << allocations[0].dump();
  EXPECT_EQ(allocations[1]["exit_code"], 0) << allocations[1].dump();
  EXPECT_EQ(RankAddresses(trial), (std::set<std::string>{nodes_->address(1), nodes_->address(2)}));

  // The restarted gang picked up from the checkpoint and ended where the
  // uninterrupted run did: the same parameters on both ranks, bit for bit,
  // and the same validation metrics.
  ASSERT_EQ(got.digests.size(), 2u);
  EXPECT_EQ(got.digests.at(0), want.digests.at(0)) << "the restarted gang ended elsewhere";
  EXPECT_EQ(got.digests.at(1), want.digests.at(1));
  ASSERT_FALSE(got.validation.empty());
  EXPECT_EQ(got.validation.back()["batches"], want.validation.back()["batches"]);
  EXPECT_EQ(got.validation.back()["metrics"], want.validation.back()["metrics"]);  // bitwise
  EXPECT_EQ(Values(got.training), Values(want.training));
}

}  // namespace
}  // namespace ring::testing::digits_netns_e2e
