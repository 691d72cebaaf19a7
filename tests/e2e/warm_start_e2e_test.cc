// Warm start on a real master, agent and quadratic trial processes:
// experiment 1 trains 200 batches and checkpoints; experiment 2, with
// `searcher.source_trial_id: 1`, starts its trial from that checkpoint (the
// trial says so, and trains on from batch 200 with the weights it restored);
// a second user is refused on a master whose experiments are not
// team-readable, by `ring config check -m` and by `ring experiment create`,
// with the key and its line, and nothing is created.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/support/test_cluster.h"

namespace ring::testing::warm_start_e2e {
namespace {

std::string QuadraticConfig(int64_t batches, const std::string& source) {
  return "name: warm-" + std::to_string(batches) +
         "\n"                           // 1
         "entrypoint: sh run.sh\n"      // 2
         "hyperparameters:\n"           // 3
         "  learning_rate: 0.05\n"      // 4
         "  batch_size: 32\n"           // 5
         "  report_every: 50\n"         // 6
         "  momentum: 0.0\n"            // 7
         "  checkpoint_every: 100\n"    // 8
         "searcher:\n"                  // 9
         "  name: single\n"             // 10
         "  metric: validation_loss\n"  // 11
         "  max_length:\n"              // 12
         "    batches: " +
         std::to_string(batches) + "\n" +                // 13
         (source.empty() ? "" : "  " + source + "\n") +  // 14
         "max_restarts: 0\n"
         "reproducibility:\n"  // the same trial seed, so the same synthetic data set
         "  experiment_seed: 7\n";
}

bool HasLine(const nlohmann::json& logs, const std::string& text) {
  for (const auto& l : logs)
    if (l["line"].get<std::string>().find(text) != std::string::npos) return true;
  return false;
}

TEST(WarmStartE2E, SecondExperimentStartsFromTheFirstsCheckpointAndOthersAreRefused) {
  TestCluster cluster;
  TestCluster::MasterOptions options;
  options.extra_args = {"--config", cluster.WriteFile("private.yaml", "experiments_team_readable: false\n")};
  cluster.StartMaster(options);
  cluster.StartAgent("agent-1", 1);
  const std::string bob = cluster.CreateUser("bob", "bob-password");
  const std::string model = BinDir() + "/../examples/quadratic/model";
  ASSERT_TRUE(std::filesystem::exists(model + "/run.sh")) << model;

  auto first = cluster.Ring(
      {"experiment", "create", cluster.WriteFile("first.yaml", QuadraticConfig(200, "")), model, "--follow"});
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  auto source_trial = cluster.GetJson("/api/v1/trials/1");
  ASSERT_EQ(source_trial["state"], "COMPLETED") << source_trial.dump();
  const std::string source = source_trial["latest_checkpoint"].get<std::string>();
  EXPECT_EQ(cluster.GetJson("/api/v1/checkpoints/" + source)["batches"], 200);

  // bob may not read the admin's experiments here: refused, key and line named.
  const std::string second_yaml =
      cluster.WriteFile("second.yaml", QuadraticConfig(300, "source_trial_id: 1"));
  auto as_bob = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {BinDir() + "/ring", "-m", cluster.url()});
    return RunCommand(args, {{"RING_TOKEN", bob}});
  };
  auto checked = as_bob({"config", "check", second_yaml});
  EXPECT_NE(checked.exit_code, 0) << checked.out << checked.err;
  EXPECT_NE((checked.out + checked.err)
                .find("second.yaml:14: error: searcher.source_trial_id names checkpoint " + source),
            std::string::npos)
      << checked.out << checked.err;
  auto refused = as_bob({"experiment", "create", second_yaml, model});
  EXPECT_NE(refused.exit_code, 0) << refused.out << refused.err;
  EXPECT_NE(refused.err.find("experiment.yaml:14: searcher.source_trial_id"), std::string::npos)
      << refused.err;
  EXPECT_NE(refused.err.find("experiments_team_readable: false"), std::string::npos) << refused.err;
  EXPECT_EQ(cluster.GetJson("/api/v1/experiments")["total"], 1);

  // The owner starts experiment 2 from trial 1's latest checkpoint.
  auto second = cluster.Ring({"--json", "experiment", "create", second_yaml, model, "--follow"});
  ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
  auto exp = cluster.GetJson("/api/v1/experiments/2");
  EXPECT_EQ(exp["state"], "COMPLETED") << exp.dump();
  EXPECT_EQ(exp["warm_start"]["checkpoint_uuid"], source) << exp.dump();
  EXPECT_EQ(exp["warm_start"]["trial_id"], 1);
  EXPECT_EQ(exp["warm_start"]["experiment_id"], 1);
  EXPECT_EQ(exp["warm_start"]["batches"], 200);
  EXPECT_TRUE(cluster.GetJson("/api/v1/experiments/1")["warm_start"].is_null());

  // The trial restored the checkpoint and trained on from batch 200 with the
  // weights it held: on the same data (the same seed), its first loss is
  // already far below the first of trial 1.
  ASSERT_EQ(cluster.GetJson("/api/v1/trials/2")["seed"], source_trial["seed"]);
  nlohmann::json logs;
  TestCluster::WaitFor(
      [&] {
        logs = cluster.GetJson("/api/v1/trials/2/logs?limit=10000")["logs"];
        return HasLine(logs, "resumed from checkpoint " + source + " at batch 200");
      },
      std::chrono::seconds(15));
  EXPECT_TRUE(HasLine(logs, "resumed from checkpoint " + source + " at batch 200")) << logs.dump();
  const auto trained = cluster.GetJson("/api/v1/trials/2/metrics?kind=training")["metrics"];
  const auto trained_before = cluster.GetJson("/api/v1/trials/1/metrics?kind=training")["metrics"];
  ASSERT_FALSE(trained.empty());
  ASSERT_FALSE(trained_before.empty());
  EXPECT_EQ(trained[0]["batches"], 250) << trained.dump();
  EXPECT_EQ(trained.back()["batches"], 300);
  EXPECT_LT(trained[0]["metrics"]["loss"].get<double>(),
            trained_before[0]["metrics"]["loss"].get<double>() / 2)
      << trained.dump() << trained_before.dump();
  // Its own checkpoint is its latest now; the source is untouched.
  auto trial = cluster.GetJson("/api/v1/trials/2");
  EXPECT_NE(trial["latest_checkpoint"], source);
  EXPECT_EQ(
      cluster.GetJson("/api/v1/checkpoints/" + trial["latest_checkpoint"].get<std::string>())["trial_id"], 2);
  EXPECT_EQ(cluster.GetJson("/api/v1/checkpoints/" + source)["state"], "ACTIVE");

  auto described = cluster.Ring({"experiment", "describe", "2"});
  EXPECT_EQ(described.exit_code, 0) << described.err;
  EXPECT_NE(described.out.find("Warm start"), std::string::npos) << described.out;
  EXPECT_NE(described.out.find("checkpoint " + source + " (trial 1 of experiment 1, 200 batches)"),
            std::string::npos)
      << described.out;
  if (HasFailure()) cluster.DumpLogs();
}

}  // namespace
}  // namespace ring::testing::warm_start_e2e
