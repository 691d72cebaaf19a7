// Fair share on a real cluster: two experiments with weights 1 and 3 on 4 CPU
// slots (two agents with two slots) split the slots 1:3 while both have work,
// measured as slot-seconds sampled from the job queue.
#include <gtest/gtest.h>

#include <thread>

#include "tests/support/test_cluster.h"

namespace ring::testing::scheduling_e2e {
namespace {

using namespace std::chrono_literals;

std::string Config(const std::string& name, double weight) {
  return "name: " + name +
         "\nentrypoint: sh run.sh\nhyperparameters:\n  learning_rate: 0.05\n  batch_size: 32\n"
         "  report_every: 50\n  checkpoint_every: 0\n  batch_sleep_ms: 8\n"
         "searcher:\n  name: random\n  metric: validation_loss\n  max_trials: 16\n  max_concurrent_trials: "
         "4\n"
         "  max_length:\n    batches: 100\nresources:\n  weight: " +
         std::to_string(weight) + "\nmax_restarts: 0\n";
}

TEST(SchedulingE2E, FairShareSplitsSlotSecondsByWeight) {
  TestCluster cluster;
  const std::string master_yaml = cluster.WriteFile(
      "master.yaml",
      "resource_pools:\n  - name: default\n    scheduler:\n      type: fair_share\n      preemption: true\n");
  cluster.StartMaster({.extra_args = {"--config", master_yaml}});
  cluster.StartAgent("a1", 2);
  cluster.StartAgent("a2", 2);
  const std::string model = BinDir() + "/../examples/quadratic/model";
  for (const auto& [name, weight] : std::vector<std::pair<std::string, double>>{{"light", 1}, {"heavy", 3}}) {
    auto created = cluster.Ring(
        {"experiment", "create", cluster.WriteFile(name + ".yaml", Config(name, weight)), model});
    ASSERT_EQ(created.exit_code, 0) << created.err;
  }

  // Sample the queue while both experiments have work waiting: the slots each
  // one holds then add up to its slot-seconds.
  double held[3] = {0, 0, 0};
  int samples = 0;
  const auto give_up = std::chrono::steady_clock::now() + 90s;
  while (std::chrono::steady_clock::now() < give_up) {
    auto jobs = cluster.GetJson("/api/v1/jobs")["jobs"];
    int running[3] = {0, 0, 0};
    bool waiting[3] = {false, false, false};
    for (const auto& j : jobs) {
      const int64_t exp = j["experiment_id"].get<int64_t>();
      if (exp < 1 || exp > 2) continue;
      if (j["state"] == "PENDING")
        waiting[exp] = true;
      else if (!j["preempting"].get<bool>())
        running[exp] += j["slots"].get<int>();
    }
    if (waiting[1] && waiting[2]) {
      held[1] += running[1];
      held[2] += running[2];
      ++samples;
    } else if (samples > 20) {
      break;  // one of them ran out of work: the contended stretch is over
    }
    std::this_thread::sleep_for(100ms);
  }
  ASSERT_GT(samples, 20) << "too short a contended stretch to measure";
  const double heavy_share = held[2] / (held[1] + held[2]);
  EXPECT_NEAR(heavy_share, 0.75, 0.075)
      << "light " << held[1] << " heavy " << held[2] << " slot-samples over " << samples << " samples";
  for (const char* id : {"1", "2"}) EXPECT_EQ(cluster.Ring({"experiment", "wait", id}).exit_code, 0);
}

}  // namespace
}  // namespace ring::testing::scheduling_e2e
