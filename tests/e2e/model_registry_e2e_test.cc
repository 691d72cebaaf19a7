// The model registry on a real master, agent and quadratic trial: a
// checkpoint of a trial is registered as version 1 of a model through the
// CLI, described and downloaded (the files are the checkpoint's); the
// experiment's policy keeps no checkpoint at all (save_* 0), yet garbage
// collection keeps the version's when the trial ends; deleting the
// experiment is refused naming the version, and allowed once the version
// is deleted, which lets the policy collect its checkpoint. Another user
// reads the model but may not change it; an archived model takes no
// version; a collected or unknown checkpoint is refused naming the field.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "tests/support/process.h"
#include "tests/support/test_cluster.h"

namespace ring::testing::model_registry_e2e {
namespace {

using namespace std::chrono_literals;

// 500 batches at 20 ms each, a validation every 50 and a checkpoint every
// 100, and a policy that keeps none of them once the trial ends.
constexpr const char* kConfig = R"(name: registry
entrypoint: sh run.sh
hyperparameters:
  learning_rate: 0.05
  batch_size: 32
  report_every: 50
  momentum: 0.0
  checkpoint_every: 100
  batch_sleep_ms: 20
searcher:
  name: single
  metric: validation_loss
  max_length:
    batches: 500
min_validation_period:
  batches: 50
max_restarts: 0
checkpoint_storage:
  save_experiment_best: 0
  save_trial_best: 0
  save_trial_latest: 0
)";

// An experiment's checkpoints (a value: a range-for over a member of a
// temporary would outlive it).
nlohmann::json Checkpoints(TestCluster& cluster) {
  return cluster.GetJson("/api/v1/experiments/1/checkpoints")["checkpoints"];
}

std::string FolderOf(const nlohmann::json& checkpoint) {
  std::filesystem::path dir = checkpoint["storage"]["host_path"].get<std::string>();
  if (!checkpoint["storage"]["storage_path"].get<std::string>().empty())
    dir /= checkpoint["storage"]["storage_path"].get<std::string>();
  return (dir / checkpoint["uuid"].get<std::string>()).string();
}

TEST(ModelRegistryE2E, AVersionOutlivesGarbageCollectionAndHoldsItsExperiment) {
  TestCluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("agent-1", 1);
  const std::string model = BinDir() + "/../examples/quadratic/model";
  auto created = cluster.Ring({"experiment", "create", cluster.WriteFile("registry.yaml", kConfig), model});
  ASSERT_EQ(created.exit_code, 0) << created.out << created.err;

  // Paused after its first checkpoint: the trial has not ended, so its
  // checkpoints are all still there to choose from.
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] { return !cluster.GetJson("/api/v1/trials/1/checkpoints")["checkpoints"].empty(); }, 60s));
  ASSERT_EQ(cluster.Ring({"experiment", "pause", "1"}).exit_code, 0);
  ASSERT_TRUE(
      TestCluster::WaitFor([&] { return cluster.GetJson("/api/v1/trials/1")["state"] == "PAUSED"; }, 30s));
  // The best of them by the searcher's metric.
  nlohmann::json best;
  for (const auto& c : Checkpoints(cluster))
    if (c["validation_metric"].is_number() &&
        (best.is_null() || c["validation_metric"].get<double>() < best["validation_metric"].get<double>()))
      best = c;
  ASSERT_FALSE(best.is_null()) << "no checkpoint with a validation metric: " << Checkpoints(cluster).dump();
  const std::string uuid = best["uuid"];

  ASSERT_EQ(
      cluster.Ring({"model", "create", "quadratic", "--description", "linear regression", "--label", "cpu"})
          .exit_code,
      0);
  auto listed =
      nlohmann::json::parse(cluster.Ring({"--json", "model", "list", "--label", "cpu"}).out, nullptr, false);
  ASSERT_TRUE(listed.is_object());
  EXPECT_EQ(listed["total"], 1);
  EXPECT_EQ(listed["models"][0]["owner"], "admin");
  listed = nlohmann::json::parse(cluster.Ring({"--json", "model", "list", "--archived", "true"}).out, nullptr,
                                 false);
  EXPECT_EQ(listed["total"], 0) << listed.dump();
  EXPECT_NE(cluster.Ring({"model", "list"}).out.find("linear regression"), std::string::npos);

  // Bad requests are refused naming the field.
  int status = 0;
  auto bad = cluster.PostJson("/api/v1/models", {{"name", "has space"}}, &status);
  EXPECT_EQ(status, 400) << bad.dump();
  EXPECT_NE(bad.dump().find("name must be 1 to 128 characters"), std::string::npos) << bad.dump();
  cluster.PostJson("/api/v1/models", {{"name", "2024"}}, &status);
  EXPECT_EQ(status, 400) << "digits only";
  bad = cluster.PostJson("/api/v1/models", {{"name", "quadratic"}}, &status);
  EXPECT_EQ(status, 409) << bad.dump();
  EXPECT_NE(bad["error"]["message"].get<std::string>().find("a model named \"quadratic\" exists already"),
            std::string::npos)
      << bad.dump();
  bad = cluster.PostJson("/api/v1/models/quadratic/versions",
                         {{"checkpoint_uuid", uuid}, {"metadata", {1, 2}}}, &status);
  EXPECT_EQ(status, 400) << bad.dump();
  EXPECT_NE(bad.dump().find("metadata must be a JSON object"), std::string::npos) << bad.dump();
  bad = cluster.GetJson("/api/v1/models/quadratic/versions/first", &status);
  EXPECT_EQ(status, 400) << bad.dump();
  cluster.GetJson("/api/v1/models/nope", &status);
  EXPECT_EQ(status, 404);
  auto unknown = cluster.Ring({"model", "register-version", "quadratic", "no-such-checkpoint"});
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_NE(unknown.err.find("checkpoint_uuid: no checkpoint no-such-checkpoint"), std::string::npos)
      << unknown.err;
  ASSERT_EQ(cluster.Ring({"model", "archive", "quadratic"}).exit_code, 0);
  auto archived = cluster.Ring({"model", "register-version", "quadratic", uuid});
  EXPECT_NE(archived.exit_code, 0);
  EXPECT_NE(archived.err.find("is archived"), std::string::npos) << archived.err;
  ASSERT_EQ(cluster.Ring({"model", "unarchive", "quadratic"}).exit_code, 0);
  auto registered = cluster.Ring({"model", "register-version", "quadratic", uuid, "--name", "best-so-far",
                                  "--notes", "paused at its first checkpoints", "--metadata", "loss=0.25",
                                  "--metadata", "framework=plain-c++"});
  ASSERT_EQ(registered.exit_code, 0) << registered.err;
  EXPECT_NE(registered.out.find("as version 1 of model quadratic"), std::string::npos) << registered.out;

  // The trial ends; the policy would delete every checkpoint but the version's.
  ASSERT_EQ(cluster.Ring({"experiment", "activate", "1"}).exit_code, 0);
  auto waited = cluster.Ring({"experiment", "wait", "1"});
  ASSERT_EQ(waited.exit_code, 0) << waited.out << waited.err;
  // Collected when the trial ends.
  TestCluster::WaitFor(
      [&] {
        for (const auto& c : Checkpoints(cluster))
          if (c["uuid"] != uuid && c["state"] == "ACTIVE") return false;
        return true;
      },
      20s);
  nlohmann::json deleted;
  int others = 0;
  for (const auto& c : Checkpoints(cluster)) {
    if (c["uuid"] == uuid) {
      EXPECT_EQ(c["state"], "ACTIVE") << c.dump();
      continue;
    }
    ++others;
    EXPECT_EQ(c["state"], "DELETED") << "the policy keeps nothing: " << c.dump();
    deleted = c;
  }
  ASSERT_GE(others, 2) << "the trial checkpointed more than once";
  EXPECT_TRUE(std::filesystem::is_directory(FolderOf(best))) << FolderOf(best);
  auto checkpoint = cluster.GetJson("/api/v1/checkpoints/" + uuid);
  EXPECT_EQ(checkpoint["model_versions"], nlohmann::json::parse(R"([{"model": "quadratic", "version": 1}])"));
  auto collected =
      cluster.Ring({"model", "register-version", "quadratic", deleted["uuid"].get<std::string>()});
  EXPECT_NE(collected.exit_code, 0);
  EXPECT_NE(collected.err.find("garbage collected"), std::string::npos) << collected.err;

  // Described, as a table and as JSON.
  auto described = cluster.Ring({"model", "describe", "quadratic"});
  ASSERT_EQ(described.exit_code, 0) << described.err;
  for (const std::string& want : {uuid, std::string("best-so-far"), std::string("linear regression")})
    EXPECT_NE(described.out.find(want), std::string::npos) << want << " in " << described.out;
  auto json =
      nlohmann::json::parse(cluster.Ring({"--json", "model", "describe", "quadratic"}).out, nullptr, false);
  ASSERT_TRUE(json.is_object());
  ASSERT_EQ(json["versions"].size(), 1u) << json.dump();
  const auto& version = json["versions"][0];
  EXPECT_EQ(version["version"], 1);
  EXPECT_EQ(version["checkpoint"]["experiment_id"], 1);
  EXPECT_EQ(version["checkpoint"]["batches"], best["batches"]);
  EXPECT_EQ(version["metadata"], nlohmann::json::parse(R"({"loss": 0.25, "framework": "plain-c++"})"));
  EXPECT_EQ(version["notes"], "paused at its first checkpoints");
  EXPECT_EQ(version["created_by"], "admin");

  // Downloaded: the latest version's files are the checkpoint's.
  const std::string into = cluster.dir() + "/downloaded";
  auto downloaded = cluster.Ring({"model", "download", "quadratic", into});
  ASSERT_EQ(downloaded.exit_code, 0) << downloaded.err;
  ASSERT_FALSE(best["resources"].empty());
  for (const auto& f : best["resources"]) {
    const std::string path = f["path"];
    EXPECT_EQ(ReadFileText(into + "/" + path), ReadFileText(FolderOf(best) + "/" + path)) << path;
  }

  // Another user reads it but may not change it.
  const std::string eve = cluster.CreateUser("eve", "eve-password");
  EXPECT_EQ(cluster.RingAs("eve", eve, {"model", "describe", "quadratic"}).exit_code, 0);
  auto by_eve = cluster.RingAs("eve", eve, {"model", "delete-version", "quadratic", "1"});
  EXPECT_NE(by_eve.exit_code, 0);
  EXPECT_NE(by_eve.err.find("belongs to admin"), std::string::npos) << by_eve.err;

  // The experiment stays while its checkpoint is a version.
  auto refused = cluster.Ring({"experiment", "delete", "1", "--yes"});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("checkpoint " + uuid + " is version 1 of model quadratic"), std::string::npos)
      << refused.err;
  EXPECT_EQ(cluster.GetJson("/api/v1/experiments/1")["id"], 1);
  auto without_yes = cluster.Ring({"model", "delete", "quadratic"});
  EXPECT_NE(without_yes.exit_code, 0);
  EXPECT_NE(without_yes.err.find("pass --yes"), std::string::npos) << without_yes.err;

  // The version deleted, the policy collects its checkpoint, and the
  // experiment may go.
  ASSERT_EQ(cluster.Ring({"model", "delete-version", "quadratic", "1"}).exit_code, 0);
  EXPECT_EQ(cluster.GetJson("/api/v1/checkpoints/" + uuid)["state"], "DELETED");
  EXPECT_FALSE(std::filesystem::exists(FolderOf(best)));
  auto deleted_experiment = cluster.Ring({"experiment", "delete", "1", "--yes"});
  EXPECT_EQ(deleted_experiment.exit_code, 0) << deleted_experiment.err;
  cluster.GetJson("/api/v1/experiments/1", &status);
  EXPECT_EQ(status, 404);
  EXPECT_EQ(cluster.GetJson("/api/v1/models/quadratic")["num_versions"], 0);
  ASSERT_EQ(cluster.Ring({"model", "delete", "quadratic"}).exit_code, 0);
  cluster.GetJson("/api/v1/models/quadratic", &status);
  EXPECT_EQ(status, 404);
  if (HasFailure()) cluster.DumpLogs();
}

}  // namespace
}  // namespace ring::testing::model_registry_e2e
