// Whole runs on the Slurm pool of slurm_environment.h, as on our own agents:
// an adaptive ASHA search whose trials each run in Slurm jobs of their own;
// pause and activate of a trial whose job runs (it checkpoints, the job
// ends, and it resumes from the checkpoint in a new job); and the
// digits-libtorch example as one 2-rank gang across both Slurm nodes,
// reaching its accuracy.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "tests/e2e/digits_harness.h"
#include "tests/e2e/slurm_environment.h"
#include "tests/support/test_cluster.h"

namespace ring::testing::slurm_runs_e2e {
namespace {

using namespace std::chrono_literals;

TEST(SlurmRunsE2E, AnAdaptiveAshaSearchRunsEachTrialInSlurmJobs) {
  RING_NEED_SLURM(slurm);
  TestCluster cluster;
  StartSlurmMaster(cluster, *slurm);
  const std::string config = cluster.WriteFile(
      "asha.yaml",
      "name: asha-on-slurm\nentrypoint: sh run.sh\nhyperparameters:\n  learning_rate:\n    type: log\n"
      "    base: 10\n    minval: -3\n    maxval: -0.5\n  batch_size: 32\n  report_every: 25\n"
      "  checkpoint_every: 0\nsearcher:\n  name: adaptive_asha\n  metric: validation_loss\n"
      "  smaller_is_better: true\n  max_trials: 6\n  max_concurrent_trials: 4\n  max_length:\n"
      "    batches: 200\n  mode: standard\n  divisor: 4\n  max_rungs: 2\n"
      "reproducibility:\n  experiment_seed: 11\nmax_restarts: 0\n");
  auto created = cluster.Ring({"experiment", "create", config, BinDir() + "/../examples/quadratic/model"});
  ASSERT_EQ(created.exit_code, 0) << created.out << created.err;
  const std::string state = WaitFinalState(cluster, 1, 180s);
  if (state != "COMPLETED") slurm->DumpLogs();
  ASSERT_EQ(state, "COMPLETED") << cluster.GetJson("/api/v1/experiments/1/trials").dump();

  // Six trials, each in Slurm jobs on the partition's nodes; the search
  // promoted at least one past the first rung (50 batches).
  auto trials = cluster.GetJson("/api/v1/experiments/1/trials")["trials"];
  ASSERT_EQ(trials.size(), 6u) << trials.dump();
  int promoted = 0;
  for (const auto& t : trials) {
    EXPECT_EQ(t["state"], "COMPLETED") << t.dump();
    promoted += t["total_batches"].get<int64_t>() > 50;
    auto allocations = cluster.GetJson("/api/v1/trials/" + std::to_string(t["id"].get<int64_t>()) +
                                       "/allocations")["allocations"];
    ASSERT_FALSE(allocations.empty());
    for (const auto& a : allocations)
      for (const auto& p : a["placements"]) {
        const std::string agent = p["agent_id"];
        EXPECT_TRUE(agent == "default:n1" || agent == "default:n2") << a.dump();
      }
  }
  EXPECT_GE(promoted, 1) << trials.dump();
  EXPECT_TRUE(slurm->WaitIdle(20s)) << slurm->Run({"squeue"}).out;
}

TEST(SlurmRunsE2E, PauseAndActivateResumeTheTrialInANewSlurmJob) {
  RING_NEED_SLURM(slurm);
  TestCluster cluster;
  StartSlurmMaster(cluster, *slurm);
  const std::string config = SlowQuadraticConfig(cluster, "pause-on-slurm");
  auto created = cluster.Ring({"experiment", "create", config, BinDir() + "/../examples/quadratic/model"});
  ASSERT_EQ(created.exit_code, 0) << created.out << created.err;
  int64_t first_job = 0;
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        first_job = LiveSlurmJob(cluster);
        return first_job > 0 && cluster.GetJson("/api/v1/trials/1").value("total_batches", 0) >= 100;
      },
      60s));

  // Pause: the trial checkpoints where it is and exits 0 (rule F8: the
  // trial is PAUSED); its job ends.
  auto paused = cluster.Ring({"experiment", "pause", "1"});
  ASSERT_EQ(paused.exit_code, 0) << paused.err;
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        return cluster.GetJson("/api/v1/experiments/1").value("state", "") == "PAUSED" &&
               cluster.GetJson("/api/v1/jobs")["jobs"].empty();
      },
      60s))
      << cluster.GetJson("/api/v1/experiments/1").dump();
  EXPECT_TRUE(slurm->WaitIdle(30s)) << "the paused trial's job did not end: " << slurm->Run({"squeue"}).out;
  auto allocations = cluster.GetJson("/api/v1/trials/1/allocations")["allocations"];
  ASSERT_EQ(allocations.size(), 1u) << allocations.dump();
  EXPECT_EQ(allocations[0]["end_cause"], "COMPLETED") << allocations[0].dump();
  EXPECT_EQ(cluster.GetJson("/api/v1/trials/1").value("state", ""), "PAUSED");
  auto checkpoints = cluster.GetJson("/api/v1/trials/1/checkpoints")["checkpoints"];
  ASSERT_FALSE(checkpoints.empty());
  const int64_t paused_at = checkpoints.back()["batches"].get<int64_t>();

  // Activate: a new job, from that checkpoint, to the end; no restart used.
  ASSERT_EQ(cluster.Ring({"experiment", "activate", "1"}).exit_code, 0);
  int64_t second_job = 0;
  const std::string state = WaitFinalState(cluster, 1, 120s, [&] {
    if (const int64_t job = LiveSlurmJob(cluster); job > first_job) second_job = job;
  });
  ASSERT_EQ(state, "COMPLETED");
  EXPECT_GT(second_job, first_job) << "the trial did not run in a second Slurm job";
  auto trial = cluster.GetJson("/api/v1/trials/1");
  EXPECT_EQ(trial["restarts"], 0) << trial.dump();
  EXPECT_EQ(trial["total_batches"], 500);
  std::map<int64_t, int> reports;
  const auto training = cluster.GetJson("/api/v1/trials/1/metrics?kind=training");
  for (const auto& m : training["metrics"]) ++reports[m["batches"].get<int64_t>()];
  EXPECT_EQ(reports.size(), 20u);
  for (const auto& [batches, count] : reports)
    EXPECT_EQ(count, 1) << "batch " << batches << " reported twice: it did not resume at " << paused_at;
}

TEST(SlurmRunsE2E, DigitsLibtorchOnTwoSlurmNodesReachesItsAccuracy) {
  RING_NEED_SLURM(slurm);
  if (auto why = digits::WhyNotRunnable(); !why.empty()) GTEST_SKIP() << why;
  TestCluster cluster;
  // One slot a node: the example's two ranks take both nodes.
  cluster.StartMaster(SlurmMasterOptions(cluster, *slurm, 1));
  const int64_t exp =
      digits::Submit(cluster, SourceDir() + "/configs/experiments/digits-libtorch.yaml", digits::ModelDir());
  ASSERT_GT(exp, 0);
  digits::WaitCompleted(cluster, exp);
  const digits::Outcome out = digits::Result(cluster, exp);
  ASSERT_FALSE(out.validation.empty());
  EXPECT_GE(out.validation.back()["metrics"]["validation_accuracy"].get<double>(), 0.95)
      << out.validation.dump();
  EXPECT_EQ(out.joined, (std::set<int>{0, 1}));
  ASSERT_EQ(out.digests.size(), 2u);
  EXPECT_EQ(out.digests.at(0), out.digests.at(1)) << "the ranks' parameters diverged";
  std::set<std::string> nodes;
  const auto allocations = cluster.GetJson("/api/v1/trials/" + std::to_string(out.trial) + "/allocations");
  for (const auto& a : allocations["allocations"])
    for (const auto& p : a["placements"]) nodes.insert(p["agent_id"].get<std::string>());
  EXPECT_EQ(nodes, (std::set<std::string>{"default:n1", "default:n2"})) << "one gang across both Slurm nodes";
}

}  // namespace
}  // namespace ring::testing::slurm_runs_e2e
