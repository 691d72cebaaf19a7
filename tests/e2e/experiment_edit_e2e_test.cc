// Experiments renamed, described and labelled after submit, through the
// real CLI and master: `ring experiment set name|description`, `ring
// experiment label add|remove`, then found again with `ring experiment
// list`'s filters; bad values change nothing; another user may not; what
// was set survives a master restart. The model folder comes back with
// `ring experiment download-model`. Trials are killed one at a time, and
// experiments deleted, files and all, even across a master crash.
#include <sqlite3.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/support/process.h"
#include "tests/support/test_cluster.h"

namespace ring::testing::experiment_edit_e2e {
namespace {

nlohmann::json ListJson(TestCluster& cluster, std::vector<std::string> args) {
  args.insert(args.begin(), {"--json", "experiment", "list"});
  auto listed = cluster.Ring(args);
  EXPECT_EQ(listed.exit_code, 0) << listed.err;
  return nlohmann::json::parse(listed.out, nullptr, false);
}

std::vector<int64_t> Ids(const nlohmann::json& list) {
  std::vector<int64_t> ids;
  for (const auto& e : list["experiments"]) ids.push_back(e["id"].get<int64_t>());
  return ids;
}

TEST(ExperimentEditE2E, NameDescriptionAndLabelsAreEditedAndFoundAgain) {
  TestCluster cluster;
  cluster.StartMaster();
  const std::string model = BinDir() + "/../examples/quadratic/model";
  const std::string config = SourceDir() + "/configs/experiments/quadratic.yaml";
  // No agent: the experiments wait, which is all this test needs of them.
  for (int i = 0; i < 2; ++i) ASSERT_EQ(cluster.Ring({"experiment", "create", config, model}).exit_code, 0);

  auto renamed = cluster.Ring({"experiment", "set", "name", "1", "baseline lr 0.05"});
  ASSERT_EQ(renamed.exit_code, 0) << renamed.out << renamed.err;
  ASSERT_EQ(
      cluster.Ring({"experiment", "set", "description", "1", "the run everything is compared to"}).exit_code,
      0);
  ASSERT_EQ(cluster.Ring({"experiment", "label", "add", "1", "baseline"}).exit_code, 0);
  ASSERT_EQ(cluster.Ring({"experiment", "label", "add", "1", "paper"}).exit_code, 0);
  ASSERT_EQ(cluster.Ring({"experiment", "label", "add", "2", "paper"}).exit_code, 0);
  auto one = cluster.GetJson("/api/v1/experiments/1");
  EXPECT_EQ(one["name"], "baseline lr 0.05");
  EXPECT_EQ(one["description"], "the run everything is compared to");
  EXPECT_EQ(one["labels"], nlohmann::json({"baseline", "paper"}));
  EXPECT_EQ(cluster.GetJson("/api/v1/experiments/2")["description"],
            "Synthetic linear regression, minibatch SGD (dependency-free C++ trial)")
      << "the config's until edited";

  EXPECT_EQ(Ids(ListJson(cluster, {"--label", "paper"})), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(Ids(ListJson(cluster, {"--label", "baseline"})), (std::vector<int64_t>{1}));
  EXPECT_EQ(Ids(ListJson(cluster, {"--name", "BASELINE"})), (std::vector<int64_t>{1}));
  EXPECT_EQ(Ids(ListJson(cluster, {"--sort", "id", "--desc"})), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(Ids(ListJson(cluster, {"--state", "ACTIVE", "--owner", "admin", "--archived", "false"})),
            (std::vector<int64_t>{1, 2}));
  auto table = cluster.Ring({"experiment", "list", "--label", "baseline"});
  EXPECT_NE(table.out.find("baseline, paper"), std::string::npos) << table.out;

  auto removed = cluster.Ring({"experiment", "label", "remove", "1", "paper"});
  ASSERT_EQ(removed.exit_code, 0) << removed.out << removed.err;
  EXPECT_EQ(Ids(ListJson(cluster, {"--label", "paper"})), (std::vector<int64_t>{2}));
  auto missing = cluster.Ring({"experiment", "label", "remove", "1", "paper"});
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.err.find("has no label \"paper\""), std::string::npos) << missing.err;

  // Bad values are refused naming the field, and change nothing.
  int status = 0;
  auto bad = cluster.PatchJson("/api/v1/experiments/1", {{"name", ""}, {"labels", {"x"}}}, &status);
  EXPECT_EQ(status, 400) << bad.dump();
  EXPECT_NE(bad.dump().find("name must be a string of 1 to 128 characters"), std::string::npos) << bad.dump();
  bad = cluster.PatchJson("/api/v1/experiments/1", {{"labels", {"ok", "tab\there"}}}, &status);
  EXPECT_EQ(status, 400) << bad.dump();
  bad = cluster.PatchJson("/api/v1/experiments/1", {{"labels", {"ok"}}, {"colour", "red"}}, &status);
  EXPECT_EQ(status, 400) << bad.dump();
  EXPECT_NE(bad.dump().find("unknown field \\\"colour\\\""), std::string::npos) << bad.dump();
  one = cluster.GetJson("/api/v1/experiments/1");
  EXPECT_EQ(one["name"], "baseline lr 0.05");
  EXPECT_EQ(one["labels"], nlohmann::json({"baseline"}));

  // Another user may not; an admin may.
  const std::string eve = cluster.CreateUser("eve", "eve-password");
  auto by_eve = cluster.RingAs("eve", eve, {"experiment", "set", "name", "1", "mine now"});
  EXPECT_NE(by_eve.exit_code, 0);
  EXPECT_NE(by_eve.err.find("belongs to admin"), std::string::npos) << by_eve.err;
  EXPECT_EQ(cluster.GetJson("/api/v1/experiments/1")["name"], "baseline lr 0.05");

  // Kept in SQLite: a restarted master shows them.
  cluster.StopMaster();
  cluster.StartMaster();
  one = cluster.GetJson("/api/v1/experiments/1");
  EXPECT_EQ(one["name"], "baseline lr 0.05");
  EXPECT_EQ(one["description"], "the run everything is compared to");
  EXPECT_EQ(one["labels"], nlohmann::json({"baseline"}));

  // The model folder as it was submitted.
  const std::string dir = cluster.dir() + "/downloaded";
  auto downloaded = cluster.Ring({"experiment", "download-model", "1", dir});
  ASSERT_EQ(downloaded.exit_code, 0) << downloaded.err;
  EXPECT_TRUE(std::filesystem::exists(dir + "/run.sh"));
}

// A grid of three trials on two slots: one trial killed while it trains
// ends CANCELED, one killed while it waits ends at once, and the grid goes
// on to complete the third; the experiment completes.
constexpr const char* kGrid = R"(name: grid-to-prune
entrypoint: sh run.sh
hyperparameters:
  learning_rate:
    type: categorical
    vals: [0.01, 0.02, 0.03]
  batch_size: 32
  report_every: 50
  checkpoint_every: 100
  batch_sleep_ms:
    type: categorical
    vals: [40]
searcher:
  name: grid
  metric: validation_loss
  max_length:
    batches: 200
resources:
  slots_per_trial: 1
max_restarts: 2
)";

TEST(ExperimentEditE2E, AKilledTrialEndsCanceledAndTheSearchGoesOn) {
  TestCluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("agent-1", 1);
  const std::string model = BinDir() + "/../examples/quadratic/model";
  auto created = cluster.Ring({"experiment", "create", cluster.WriteFile("grid.yaml", kGrid), model});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  auto trials = [&] { return cluster.GetJson("/api/v1/experiments/1/trials")["trials"]; };
  ASSERT_TRUE(TestCluster::WaitFor([&] { return trials().size() == 3; }, std::chrono::seconds(20)));
  // One slot: trial 1 trains (about 8 s), 2 and 3 wait.
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] { return cluster.GetJson("/api/v1/trials/1")["total_batches"].get<int64_t>() > 0; },
      std::chrono::seconds(30)));
  auto killed = cluster.Ring({"trial", "kill", "1"});
  ASSERT_EQ(killed.exit_code, 0) << killed.err;
  EXPECT_NE(killed.out.find("Killing trial 1"), std::string::npos) << killed.out;
  auto waiting = cluster.Ring({"trial", "kill", "2"});
  ASSERT_EQ(waiting.exit_code, 0) << waiting.err;
  const std::string eve = cluster.CreateUser("eve", "eve-password");
  auto by_eve = cluster.RingAs("eve", eve, {"trial", "kill", "3"});
  EXPECT_NE(by_eve.exit_code, 0);
  EXPECT_NE(by_eve.err.find("belongs to admin"), std::string::npos) << by_eve.err;

  auto done = cluster.Ring({"experiment", "wait", "1"});
  EXPECT_EQ(cluster.GetJson("/api/v1/experiments/1")["state"], "COMPLETED") << done.out << done.err;
  EXPECT_EQ(cluster.GetJson("/api/v1/trials/1")["state"], "CANCELED");
  EXPECT_EQ(cluster.GetJson("/api/v1/trials/2")["state"], "CANCELED");
  EXPECT_EQ(cluster.GetJson("/api/v1/trials/3")["state"], "COMPLETED");
  EXPECT_EQ(cluster.GetJson("/api/v1/trials/3")["total_batches"], 200);
  EXPECT_EQ(cluster.GetJson("/api/v1/trials/1")["restarts"], 0) << "a kill is not restarted";
  // Killing an ended trial changes nothing.
  auto again = cluster.Ring({"trial", "kill", "1"});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("Trial 1 is CANCELED"), std::string::npos) << again.out;
}

// The folder of each ACTIVE checkpoint of experiment `exp`'s first trial.
std::vector<std::string> CheckpointFolders(TestCluster& cluster, int64_t exp) {
  std::vector<std::string> out;
  const auto trials = cluster.GetJson("/api/v1/experiments/" + std::to_string(exp) + "/trials")["trials"];
  for (const auto& t : trials) {
    const auto list =
        cluster.GetJson("/api/v1/trials/" + std::to_string(t["id"].get<int64_t>()) + "/checkpoints");
    for (const auto& c : list["checkpoints"])
      if (c["state"] == "ACTIVE")
        out.push_back(c["storage"]["host_path"].get<std::string>() + "/" +
                      c["storage"]["storage_path"].get<std::string>() + "/" + c["uuid"].get<std::string>());
  }
  return out;
}

// The trial ids of experiment `exp`, from the API.
std::vector<int64_t> TrialIds(TestCluster& cluster, int64_t exp) {
  std::vector<int64_t> ids;
  const auto trials = cluster.GetJson("/api/v1/experiments/" + std::to_string(exp) + "/trials")["trials"];
  for (const auto& t : trials) ids.push_back(t["id"].get<int64_t>());
  return ids;
}

// Opens the stopped master's SQLite file read-only and counts what is left of
// `exp` and its trials, table by table ("experiments: 1" and so on); empty
// when nothing is.
std::vector<std::string> RowsLeft(const std::string& db_file, int64_t exp,
                                  const std::vector<int64_t>& trials) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(db_file.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    sqlite3_close(db);
    return {"cannot open " + db_file};
  }
  std::string in;
  for (int64_t t : trials) in += (in.empty() ? "" : ",") + std::to_string(t);
  const std::string by_trial = " WHERE trial_id IN (" + in + ")";
  const std::vector<std::pair<std::string, std::string>> queries = {
      {"experiments", "SELECT COUNT(*) FROM experiments WHERE id = " + std::to_string(exp)},
      {"trials", "SELECT COUNT(*) FROM trials WHERE experiment_id = " + std::to_string(exp)},
      {"metrics", "SELECT COUNT(*) FROM metrics" + by_trial},
      {"logs", "SELECT COUNT(*) FROM logs" + by_trial},
      {"checkpoints", "SELECT COUNT(*) FROM checkpoints" + by_trial},
      {"allocations", "SELECT COUNT(*) FROM allocations" + by_trial}};
  std::vector<std::string> left;
  for (const auto& [table, sql] : queries) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
      left.push_back(table + ": " + sqlite3_errmsg(db));
    } else if (sqlite3_step(stmt) == SQLITE_ROW && sqlite3_column_int64(stmt, 0) != 0) {
      left.push_back(table + ": " + std::to_string(sqlite3_column_int64(stmt, 0)));
    }
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
  return left;
}

// Deleting removes an ended experiment's rows and checkpoint files; an
// active one, or another user's, is refused. A deletion stopped halfway (a
// checkpoint folder that cannot be removed, then the master killed) is
// finished by the restarted master. Beyond the API's 404s, the stopped
// master's SQLite file holds no row of a deleted experiment's trials.
TEST(ExperimentEditE2E, ADeletedExperimentLeavesNoRowsOrFilesEvenAfterACrash) {
  TestCluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("agent-1", 1);
  const std::string model = BinDir() + "/../examples/quadratic/model";
  const std::string config = SourceDir() + "/configs/experiments/quadratic.yaml";
  for (int i = 0; i < 2; ++i)
    ASSERT_EQ(cluster.Ring({"experiment", "create", config, model, "--follow"}).exit_code, 0);
  const auto folders = CheckpointFolders(cluster, 1);
  ASSERT_FALSE(folders.empty());
  const auto first_trials = TrialIds(cluster, 1), second_trials = TrialIds(cluster, 2);
  ASSERT_FALSE(first_trials.empty());
  ASSERT_FALSE(second_trials.empty());
  const std::string db = cluster.dir() + "/master/ringmaster.db";
  for (const auto& f : folders) ASSERT_TRUE(std::filesystem::exists(f)) << f;

  // Not while it runs; not another user's.
  ASSERT_EQ(cluster.Ring({"experiment", "create", cluster.WriteFile("slow.yaml", kGrid), model}).exit_code,
            0);
  auto active = cluster.Ring({"experiment", "delete", "3", "--yes"});
  EXPECT_NE(active.exit_code, 0);
  EXPECT_NE(active.err.find("experiment 3 is ACTIVE; kill it"), std::string::npos) << active.err;
  ASSERT_EQ(cluster.Ring({"experiment", "kill", "3"}).exit_code, 0);
  const std::string eve = cluster.CreateUser("eve", "eve-password");
  auto by_eve = cluster.RingAs("eve", eve, {"experiment", "delete", "1", "--yes"});
  EXPECT_NE(by_eve.exit_code, 0);
  EXPECT_NE(by_eve.err.find("belongs to admin"), std::string::npos) << by_eve.err;
  auto unasked = cluster.Ring({"experiment", "delete", "1"});  // no terminal, no --yes
  EXPECT_NE(unasked.exit_code, 0);
  EXPECT_NE(unasked.err.find("pass --yes"), std::string::npos) << unasked.err;

  auto deleted = cluster.Ring({"experiment", "delete", "1", "--yes"});
  ASSERT_EQ(deleted.exit_code, 0) << deleted.err;
  EXPECT_NE(deleted.out.find("Experiment 1 deleted"), std::string::npos) << deleted.out;
  int status = 0;
  cluster.GetJson("/api/v1/experiments/1", &status);
  EXPECT_EQ(status, 404);
  cluster.GetJson("/api/v1/trials/1", &status);
  EXPECT_EQ(status, 404);
  for (const auto& f : folders) EXPECT_FALSE(std::filesystem::exists(f)) << f;
  EXPECT_EQ(cluster.GetJson("/api/v1/experiments")["total"], 2);
  EXPECT_EQ(cluster.GetJson("/api/v1/experiments/2")["state"], "COMPLETED") << "another experiment is whole";

  // Halfway: a checkpoint folder that is a mount point cannot be removed.
  const auto second = CheckpointFolders(cluster, 2);
  ASSERT_GE(second.size(), 1u);
  const bool root = ::geteuid() == 0;
  if (!root || RunCommand({"mount", "-t", "tmpfs", "tmpfs", second.back()}).exit_code != 0) {
    cluster.StopMaster();
    EXPECT_EQ(RowsLeft(db, 1, first_trials), std::vector<std::string>{});
    EXPECT_FALSE(RowsLeft(db, 2, second_trials).empty()) << "the query finds no rows of a kept experiment";
    GTEST_SKIP() << (root ? "cannot mount a tmpfs here"
                          : "the crash half of this test mounts a folder, which needs root");
  }
  auto stuck = cluster.client().Request("DELETE", "/api/v1/experiments/2", "");
  ASSERT_TRUE(stuck.ok());
  EXPECT_EQ(stuck->status, 202) << stuck->body;
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        int s = 0;
        cluster.GetJson("/api/v1/experiments/2", &s);
        return s == 404;  // hidden from the API at once
      },
      std::chrono::seconds(10)));
  std::this_thread::sleep_for(std::chrono::seconds(1));
  cluster.GetJson("/api/v1/experiments/2/trials", &status);
  EXPECT_EQ(status, 200) << "its rows stay while a folder is left";
  cluster.KillMaster();
  ASSERT_EQ(RunCommand({"umount", second.back()}).exit_code, 0);
  cluster.StartMaster();
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        int s = 0;
        cluster.GetJson("/api/v1/experiments/2/trials", &s);
        return s == 404;
      },
      std::chrono::seconds(20)));
  for (const auto& f : second) EXPECT_FALSE(std::filesystem::exists(f)) << f;
  EXPECT_EQ(cluster.GetJson("/api/v1/experiments")["total"], 1);
  const auto third_trials = TrialIds(cluster, 3);
  cluster.StopMaster();
  EXPECT_EQ(RowsLeft(db, 1, first_trials), std::vector<std::string>{});
  EXPECT_EQ(RowsLeft(db, 2, second_trials), std::vector<std::string>{});
  EXPECT_FALSE(RowsLeft(db, 3, third_trials).empty()) << "the query finds no rows of a kept experiment";
}

// Templates: set from a file, listed and described; an experiment created
// with --template gets the template's keys under its own; another user
// reads it but may not replace or delete it; an unknown one is refused.
TEST(ExperimentEditE2E, AnExperimentStartsFromATemplate) {
  TestCluster cluster;
  cluster.StartMaster();
  const std::string model = BinDir() + "/../examples/quadratic/model";
  const std::string file = cluster.WriteFile("team.yaml",
                                             "max_restarts: 7\n"
                                             "labels: [team-default]\n"
                                             "resources:\n  priority: 30\n");
  ASSERT_EQ(cluster.Ring({"template", "set", "team", file}).exit_code, 0);
  auto listed = cluster.Ring({"template", "list"});
  EXPECT_NE(listed.out.find("team"), std::string::npos) << listed.out;
  auto described = cluster.Ring({"template", "describe", "team"});
  EXPECT_NE(described.out.find("max_restarts: 7"), std::string::npos) << described.out;
  auto created = cluster.Ring({"experiment", "create", SourceDir() + "/configs/experiments/quadratic.yaml",
                               model, "--template", "team"});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  const auto exp = cluster.GetJson("/api/v1/experiments/1");
  EXPECT_NE(exp["config"].get<std::string>().find("max_restarts: 2"), std::string::npos)
      << "the experiment's own key wins: " << exp["config"];
  EXPECT_EQ(exp["labels"], nlohmann::json({"team-default"})) << "a key only the template has";
  EXPECT_EQ(exp["resources"]["priority"], 30);

  auto unknown = cluster.Ring({"experiment", "create", SourceDir() + "/configs/experiments/quadratic.yaml",
                               model, "--template", "nope"});
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_NE(unknown.err.find("template: no template named \"nope\""), std::string::npos) << unknown.err;
  int status = 0;
  auto bad = cluster.client().Request("PUT", "/api/v1/templates/bad", R"({"config": "- a list\n"})");
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ(bad->status, 400) << bad->body;

  const std::string eve = cluster.CreateUser("eve", "eve-password");
  EXPECT_EQ(cluster.RingAs("eve", eve, {"template", "describe", "team"}).exit_code, 0);
  auto replaced = cluster.RingAs("eve", eve, {"template", "set", "team", file});
  EXPECT_NE(replaced.exit_code, 0);
  EXPECT_NE(replaced.err.find("belongs to admin"), std::string::npos) << replaced.err;
  auto removed = cluster.RingAs("eve", eve, {"template", "delete", "team"});
  EXPECT_NE(removed.exit_code, 0);
  ASSERT_EQ(cluster.Ring({"template", "delete", "team"}).exit_code, 0);
  cluster.GetJson("/api/v1/templates/team", &status);
  EXPECT_EQ(status, 404);
}

// A fork runs its parent's model folder with the parent's config and one
// change, or with a config file of the user's (--config-file); both show
// the link. Another user may fork what they may read,
// owning the fork; a parent deleted leaves the fork with no link.
TEST(ExperimentEditE2E, AForkRunsItsParentsModelWithAChangedHyperparameter) {
  TestCluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("agent-1", 1);
  const std::string model = BinDir() + "/../examples/quadratic/model";
  ASSERT_EQ(cluster
                .Ring({"experiment", "create", SourceDir() + "/configs/experiments/quadratic.yaml", model,
                       "--follow"})
                .exit_code,
            0);
  auto forked = cluster.Ring(
      {"experiment", "fork", "1", "--config", "hyperparameters.learning_rate.val=0.02", "--follow"});
  ASSERT_EQ(forked.exit_code, 0) << forked.out << forked.err;
  EXPECT_NE(forked.out.find("Forked experiment 1 as experiment 2"), std::string::npos) << forked.out;
  const auto child = cluster.GetJson("/api/v1/experiments/2");
  EXPECT_EQ(child["state"], "COMPLETED");
  EXPECT_EQ(child["forked_from"], 1);
  EXPECT_TRUE(cluster.GetJson("/api/v1/experiments/1")["forked_from"].is_null());
  EXPECT_EQ(cluster.GetJson("/api/v1/trials/2")["hparams"]["learning_rate"], 0.02);
  EXPECT_EQ(cluster.GetJson("/api/v1/trials/1")["hparams"]["learning_rate"], 0.05);
  // Bad changes are refused naming the key, and make nothing.
  auto bad = cluster.Ring({"experiment", "fork", "1", "--config", "searcher.max_length.batches=-3"});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("searcher.max_length"), std::string::npos) << bad.err;
  int status = 0;
  auto no_parent =
      cluster.PostJson("/api/v1/experiments", {{"config", "name: x\n"}, {"forked_from", 99}}, &status);
  EXPECT_EQ(status, 400) << no_parent.dump();
  EXPECT_NE(no_parent.dump().find("forked_from: experiment 99 not found"), std::string::npos)
      << no_parent.dump();
  EXPECT_EQ(cluster.GetJson("/api/v1/experiments")["total"], 2);

  // --config-file: a config of the user's own instead of the parent's, with
  // --config over it; the parent's model folder still runs.
  std::string file_config = ReadFileText(SourceDir() + "/configs/experiments/quadratic.yaml");
  const auto at = file_config.find("name: quadratic\n");
  ASSERT_NE(at, std::string::npos);
  file_config.replace(at, 16, "name: from-a-file\n");
  const auto lr = file_config.find("val: 0.05");
  ASSERT_NE(lr, std::string::npos);
  file_config.replace(lr, 9, "val: 0.03");
  auto from_file =
      cluster.Ring({"experiment", "fork", "1", "--config-file", cluster.WriteFile("fork.yaml", file_config),
                    "--config", "hyperparameters.batch_size.val=16", "--follow"});
  ASSERT_EQ(from_file.exit_code, 0) << from_file.out << from_file.err;
  EXPECT_NE(from_file.out.find("Forked experiment 1 as experiment 3"), std::string::npos) << from_file.out;
  const auto third = cluster.GetJson("/api/v1/experiments/3");
  EXPECT_EQ(third["state"], "COMPLETED") << third.dump();
  EXPECT_EQ(third["name"], "from-a-file");
  EXPECT_EQ(third["forked_from"], 1);
  const auto third_trial = cluster.GetJson("/api/v1/experiments/3/trials")["trials"].at(0);
  EXPECT_EQ(third_trial["hparams"]["learning_rate"], 0.03) << third_trial.dump();
  EXPECT_EQ(third_trial["hparams"]["batch_size"], 16) << third_trial.dump();
  auto missing = cluster.Ring({"experiment", "fork", "1", "--config-file", cluster.dir() + "/no-such.yaml"});
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.err.find("cannot read the config"), std::string::npos) << missing.err;

  const std::string eve = cluster.CreateUser("eve", "eve-password");
  auto by_eve = cluster.RingAs("eve", eve, {"experiment", "fork", "1", "--paused"});
  ASSERT_EQ(by_eve.exit_code, 0) << by_eve.err;
  EXPECT_EQ(cluster.GetJson("/api/v1/experiments/4")["owner"], "eve");
  ASSERT_EQ(cluster.Ring({"experiment", "delete", "1", "--yes"}).exit_code, 0);
  EXPECT_TRUE(cluster.GetJson("/api/v1/experiments/2")["forked_from"].is_null()) << "its parent is gone";
}

}  // namespace
}  // namespace ring::testing::experiment_edit_e2e
