// Changing an ended experiment's checkpoint GC policy on a real master,
// agent and quadratic trial: four checkpoints kept under save_trial_latest:
// 10 become one after `ring experiment set save-trial-latest ID 1`, their
// folders removed at once and their rows DELETED; the stored config says
// the new count; a misspelt key or a negative count is refused and changes
// nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/support/test_cluster.h"

namespace ring::testing::checkpoint_policy_e2e {
namespace {

constexpr char kConfig[] = R"(name: keep-many
entrypoint: sh run.sh
hyperparameters:
  learning_rate: 0.05
  batch_size: 32
  report_every: 50
  momentum: 0.0
  checkpoint_every: 100
searcher:
  name: single
  metric: validation_loss
  max_length: {batches: 400}
checkpoint_storage:
  save_experiment_best: 0
  save_trial_best: 0
  save_trial_latest: 10
max_restarts: 0
)";

std::string Folder(TestCluster& cluster, const nlohmann::json& c) {
  auto full = cluster.GetJson("/api/v1/checkpoints/" + c["uuid"].get<std::string>());
  return full["storage"]["host_path"].get<std::string>() + "/" +
         full["storage"]["storage_path"].get<std::string>() + "/" + full["uuid"].get<std::string>();
}

TEST(CheckpointPolicyE2E, AnEndedExperimentsPolicyChangesAndCollectsAtOnce) {
  TestCluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("agent-1", 1);
  const std::string model = BinDir() + "/../examples/quadratic/model";
  auto run =
      cluster.Ring({"experiment", "create", cluster.WriteFile("keep.yaml", kConfig), model, "--follow"});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  auto before = cluster.GetJson("/api/v1/trials/1/checkpoints")["checkpoints"];
  ASSERT_EQ(before.size(), 4u) << before.dump();
  std::vector<std::string> folders;
  for (const auto& c : before) {
    EXPECT_EQ(c["state"], "ACTIVE");
    folders.push_back(Folder(cluster, c));
    EXPECT_TRUE(std::filesystem::is_directory(folders.back())) << folders.back();
  }

  // Refused, and nothing changes.
  int status = 0;
  auto misspelt = cluster.PatchJson("/api/v1/experiments/1",
                                    {{"checkpoint_storage", {{"save_trial_lastest", 1}}}}, &status);
  EXPECT_EQ(status, 400) << misspelt.dump();
  EXPECT_NE(misspelt.dump().find("save_trial_lastest"), std::string::npos) << misspelt.dump();
  auto negative = cluster.PatchJson("/api/v1/experiments/1",
                                    {{"checkpoint_storage", {{"save_trial_best", -1}}}}, &status);
  EXPECT_EQ(status, 400) << negative.dump();
  EXPECT_NE(negative.dump().find("checkpoint_storage.save_trial_best"), std::string::npos) << negative.dump();
  EXPECT_NE(cluster.Ring({"experiment", "set", "save-trial-latest", "1", "many"}).exit_code, 0);
  for (const auto& c : cluster.GetJson("/api/v1/trials/1/checkpoints")["checkpoints"])
    EXPECT_EQ(c["state"], "ACTIVE") << c.dump();

  auto set = cluster.Ring({"experiment", "set", "save-trial-latest", "1", "1"});
  ASSERT_EQ(set.exit_code, 0) << set.out << set.err;
  EXPECT_NE(set.out.find("Experiment 1: save-trial-latest set to 1"), std::string::npos) << set.out;
  auto after = cluster.GetJson("/api/v1/trials/1/checkpoints")["checkpoints"];
  ASSERT_EQ(after.size(), 4u);
  int active = 0;
  for (size_t i = 0; i < after.size(); ++i) {
    const bool latest = after[i]["batches"] == 400;
    EXPECT_EQ(after[i]["state"], latest ? "ACTIVE" : "DELETED") << after[i].dump();
    active += after[i]["state"] == "ACTIVE";
  }
  EXPECT_EQ(active, 1);
  for (size_t i = 0; i < before.size(); ++i)
    EXPECT_EQ(std::filesystem::exists(folders[i]), before[i]["batches"] == 400) << folders[i];
  const std::string config = cluster.GetJson("/api/v1/experiments/1")["config"];
  EXPECT_NE(config.find("save_trial_latest: 1"), std::string::npos) << config;
  // The one left still downloads.
  auto download = cluster.Ring({"checkpoint", "download",
                                cluster.GetJson("/api/v1/trials/1")["latest_checkpoint"].get<std::string>(),
                                cluster.dir() + "/latest"});
  EXPECT_EQ(download.exit_code, 0) << download.err;
  if (HasFailure()) cluster.DumpLogs();
}

}  // namespace
}  // namespace ring::testing::checkpoint_policy_e2e
