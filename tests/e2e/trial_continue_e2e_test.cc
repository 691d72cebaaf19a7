// Continuing a trial on a real master, agent and quadratic trial processes:
// a random search's trial trains 200 batches; `ring trial continue 1
// --length 300` makes a single-trial experiment with that trial's sampled
// values, seed and model definition that resumes from its checkpoint at
// batch 200 and trains to 300; both pages link to each other; a length the
// checkpoint already reached, an unknown trial, an unknown field and
// continuing a search's trial in place are refused and change nothing. In
// place, a single-trial experiment trains its own trial on.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/support/test_cluster.h"

namespace ring::testing::trial_continue_e2e {
namespace {

constexpr char kConfig[] = R"(name: sweep
entrypoint: sh run.sh
hyperparameters:
  learning_rate: {type: double, minval: 0.02, maxval: 0.08}
  batch_size: 32
  report_every: 50
  momentum: 0.0
  checkpoint_every: 100
searcher:
  name: random
  max_trials: 1
  metric: validation_loss
  max_length: {batches: 200}
max_restarts: 0
reproducibility: {experiment_seed: 11}
)";

TEST(TrialContinueE2E, ANewExperimentTrainsTheTrialOnFromItsCheckpoint) {
  TestCluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("agent-1", 1);
  const std::string model = BinDir() + "/../examples/quadratic/model";
  ASSERT_TRUE(std::filesystem::exists(model + "/run.sh")) << model;
  auto first =
      cluster.Ring({"experiment", "create", cluster.WriteFile("sweep.yaml", kConfig), model, "--follow"});
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  const auto source = cluster.GetJson("/api/v1/trials/1");
  ASSERT_EQ(source["state"], "COMPLETED") << source.dump();
  const std::string checkpoint = source["latest_checkpoint"].get<std::string>();

  // Refused, and nothing created: a length the checkpoint reached, an
  // unknown trial, an unknown field.
  auto short_one = cluster.Ring({"trial", "continue", "1", "--length", "200"});
  EXPECT_NE(short_one.exit_code, 0);
  EXPECT_NE(short_one.err.find("length 200 is not beyond trial 1's latest checkpoint, at 200 batches"),
            std::string::npos)
      << short_one.err;
  auto unknown = cluster.Ring({"trial", "continue", "9", "--length", "300"});
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_NE(unknown.err.find("trial 9"), std::string::npos) << unknown.err;
  int status = 0;
  auto extra = cluster.PostJson("/api/v1/trials/1/continue", {{"length", 300}, {"in_plaec", true}}, &status);
  EXPECT_EQ(status, 400) << extra.dump();
  EXPECT_NE(extra.dump().find("in_plaec"), std::string::npos) << extra.dump();
  auto searched = cluster.Ring({"trial", "continue", "1", "--length", "300", "--in-place"});
  EXPECT_NE(searched.exit_code, 0);
  EXPECT_NE(
      searched.err.find("experiment 1 searches with random: only a single-trial experiment continues in "
                        "place"),
      std::string::npos)
      << searched.err;
  EXPECT_EQ(cluster.GetJson("/api/v1/experiments")["total"], 1);
  EXPECT_EQ(cluster.GetJson("/api/v1/experiments/1")["state"], "COMPLETED");

  auto continued = cluster.Ring({"trial", "continue", "1", "--length", "300", "--follow"});
  ASSERT_EQ(continued.exit_code, 0) << continued.out << continued.err;
  EXPECT_NE(continued.out.find("Continuing trial 1 as experiment 2"), std::string::npos) << continued.out;
  auto exp = cluster.GetJson("/api/v1/experiments/2");
  EXPECT_EQ(exp["state"], "COMPLETED") << exp.dump();
  EXPECT_EQ(exp["searcher"]["name"], "single") << exp.dump();
  EXPECT_EQ(exp["description"], "Continues trial 1 of experiment 1");
  EXPECT_EQ(exp["warm_start"]["trial_id"], 1) << exp.dump();
  EXPECT_EQ(exp["warm_start"]["checkpoint_uuid"], checkpoint);

  // The same values (the sampled learning rate exactly) and seed, trained
  // from batch 200 to 300.
  auto trial = cluster.GetJson("/api/v1/trials/2");
  EXPECT_EQ(trial["hparams"], source["hparams"]) << trial.dump() << source.dump();
  EXPECT_EQ(trial["seed"], source["seed"]);
  EXPECT_EQ(trial["total_batches"], 300) << trial.dump();
  const auto trained = cluster.GetJson("/api/v1/trials/2/metrics?kind=training")["metrics"];
  ASSERT_FALSE(trained.empty());
  EXPECT_EQ(trained[0]["batches"], 250) << trained.dump();
  EXPECT_EQ(trained.back()["batches"], 300);

  // Both pages link: the source trial says where it was continued, the new
  // experiment where it came from.
  const auto after = cluster.GetJson("/api/v1/trials/1");
  ASSERT_EQ(after["continued_in"].size(), 1u) << after.dump();
  EXPECT_EQ(after["continued_in"][0]["experiment_id"], 2);
  auto described = cluster.Ring({"trial", "describe", "1"});
  EXPECT_NE(described.out.find("Continued in:       experiment 2"), std::string::npos) << described.out;
  auto exp_described = cluster.Ring({"experiment", "describe", "2"});
  EXPECT_NE(exp_described.out.find("(trial 1 of experiment 1, 200 batches)"), std::string::npos)
      << exp_described.out;
  if (HasFailure()) cluster.DumpLogs();
}

// In place: the ended single-trial experiment trains the same trial on,
// from its checkpoint at 200 to 300, and ends again; its config says the new
// length, and every metric is stored once.
TEST(TrialContinueE2E, InPlaceTheSameTrialTrainsOnInItsOwnExperiment) {
  TestCluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("agent-1", 1);
  const std::string model = BinDir() + "/../examples/quadratic/model";
  std::string config = kConfig;
  config.replace(config.find("name: random\n  max_trials: 1"),
                 std::string("name: random\n  max_trials: 1").size(), "name: single");
  auto first =
      cluster.Ring({"experiment", "create", cluster.WriteFile("one.yaml", config), model, "--follow"});
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  const std::string checkpoint = cluster.GetJson("/api/v1/trials/1")["latest_checkpoint"];

  auto continued = cluster.Ring({"trial", "continue", "1", "--length", "300", "--in-place", "--follow"});
  ASSERT_EQ(continued.exit_code, 0) << continued.out << continued.err;
  EXPECT_NE(continued.out.find("Continuing trial 1 in place in experiment 1"), std::string::npos)
      << continued.out;
  EXPECT_EQ(cluster.GetJson("/api/v1/experiments")["total"], 1);
  auto exp = cluster.GetJson("/api/v1/experiments/1");
  EXPECT_EQ(exp["state"], "COMPLETED") << exp.dump();
  EXPECT_NE(exp["config"].get<std::string>().find("batches: 300"), std::string::npos) << exp["config"];
  auto trial = cluster.GetJson("/api/v1/trials/1");
  EXPECT_EQ(trial["state"], "COMPLETED");
  EXPECT_EQ(trial["total_batches"], 300) << trial.dump();
  EXPECT_EQ(cluster.GetJson("/api/v1/trials/1/allocations")["allocations"].size(), 2u);
  const auto trained = cluster.GetJson("/api/v1/trials/1/metrics?kind=training")["metrics"];
  std::vector<int64_t> batches;
  for (const auto& m : trained) batches.push_back(m["batches"].get<int64_t>());
  EXPECT_EQ(batches, (std::vector<int64_t>{50, 100, 150, 200, 250, 300})) << trained.dump();
  auto logs = cluster.GetJson("/api/v1/trials/1/logs?limit=10000")["logs"];
  bool resumed = false;
  for (const auto& l : logs)
    resumed |= l["line"].get<std::string>().find("resumed from checkpoint " + checkpoint + " at batch 200") !=
               std::string::npos;
  EXPECT_TRUE(resumed) << logs.dump();

  // Running again, it is not continued a second time meanwhile.
  auto again = cluster.PostJson("/api/v1/trials/1/continue", {{"length", 250}, {"in_place", true}});
  EXPECT_NE(again.dump().find("not beyond"), std::string::npos) << again.dump();
  if (HasFailure()) cluster.DumpLogs();
}

}  // namespace
}  // namespace ring::testing::trial_continue_e2e
