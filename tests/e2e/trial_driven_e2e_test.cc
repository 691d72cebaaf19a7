// The trial-driven searcher contract on a real cluster (a master, two agents
// with two CPU slots each): adaptive_asha with time_metric and max_time and
// no max_length. Its trials (tests/e2e/data/trial_driven/train.py) get no
// operations; they report validations carrying `batches` and exit 0 when the
// master asks them to stop. Every trial is stopped by the searcher: at a rung
// where it is not kept, or at the top rung (max_time), so each ends
// SEARCHER_STOPPED, COMPLETED, after exactly one allocation (never resumed),
// and the search trains less than every trial to max_time.
#include <gtest/gtest.h>

#include <fstream>

#include "tests/support/test_cluster.h"

namespace ring::testing::trial_driven_e2e {
namespace {

TEST(TrialDrivenE2E, AshaWithTimeMetricStopsTrialsThroughPreemption) {
  TestCluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("agent-1", 2);
  cluster.StartAgent("agent-2", 2);
  const std::string config = cluster.dir() + "/trial-driven.yaml";
  {
    std::ofstream out(config);
    // Rungs at 8, 16 and 32 batches; 6 trials, 2 at a time.
    out << "name: trial-driven-asha\nentrypoint: python3 train.py\nmax_restarts: 0\n"
           "hyperparameters:\n  lr: {type: double, minval: 0.0, maxval: 1.0}\n"
           "reproducibility: {experiment_seed: 17}\n"
           "searcher:\n  name: adaptive_asha\n  metric: loss\n  time_metric: batches\n  max_time: 32\n"
           "  max_trials: 6\n  max_concurrent_trials: 2\n  divisor: 2\n  max_rungs: 3\n  mode: aggressive\n";
  }
  auto created =
      cluster.Ring({"--json", "experiment", "create", config, SourceDir() + "/tests/e2e/data/trial_driven"});
  ASSERT_EQ(created.exit_code, 0) << created.out << created.err;
  const int64_t id = nlohmann::json::parse(created.out, nullptr, false).value("id", int64_t{0});
  ASSERT_GT(id, 0) << created.out;
  auto waited = cluster.Ring({"experiment", "wait", std::to_string(id)});
  ASSERT_EQ(waited.exit_code, 0) << waited.out << waited.err;

  auto exp = cluster.GetJson("/api/v1/experiments/" + std::to_string(id));
  EXPECT_EQ(exp["state"], "COMPLETED") << exp.dump();
  auto trials = cluster.GetJson("/api/v1/experiments/" + std::to_string(id) + "/trials")["trials"];
  ASSERT_EQ(trials.size(), 6u) << trials.dump();
  int64_t total = 0;
  int stopped_early = 0;
  for (const auto& t : trials) {
    const std::string trial = std::to_string(t["id"].get<int64_t>());
    EXPECT_EQ(t["state"], "COMPLETED") << t.dump();
    EXPECT_EQ(t["restarts"], 0) << t.dump();
    const int64_t batches = t["total_batches"].get<int64_t>();
    total += batches;
    EXPECT_GE(batches, 8) << t.dump();   // nobody is stopped before the first rung
    EXPECT_LE(batches, 36) << t.dump();  // nor trains on past the top rung
    stopped_early += batches < 32;
    auto allocations = cluster.GetJson("/api/v1/trials/" + trial + "/allocations")["allocations"];
    ASSERT_EQ(allocations.size(), 1u) << "a stopped trial is not resumed: " << allocations.dump();
    EXPECT_EQ(allocations[0]["end_cause"], "SEARCHER_STOPPED") << allocations[0].dump();
    EXPECT_EQ(allocations[0]["exit_code"], 0) << allocations[0].dump();
    // The trial saw should_preempt() true and exited on its own.
    auto logs = cluster.GetJson("/api/v1/trials/" + trial + "/logs?limit=1000")["logs"];
    bool saw_stop = false, saw_contract = false;
    for (const auto& l : logs) {
      const std::string line = l["line"];
      saw_stop |= line.rfind("should_preempt at", 0) == 0;
      saw_contract |= line == "time metric batches max_time 32";
    }
    EXPECT_TRUE(saw_stop) << logs.dump();
    EXPECT_TRUE(saw_contract) << logs.dump();
  }
  EXPECT_GT(stopped_early, 0) << "ASHA stops some trials below max_time";
  EXPECT_LT(total, 6 * 32);
  if (HasFailure()) cluster.DumpLogs();
}

}  // namespace
}  // namespace ring::testing::trial_driven_e2e
