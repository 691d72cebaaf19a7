// Determined's config keys on a real master, agent and trial: `data` reaches
// every rank as RING_DATA, a list-form entrypoint runs without a shell,
// environment_variables (list and cpu map) reach the trial; `ring experiment
// create --config key=value` and `--test`; warnings on submit; and `ring
// config check` asking the master what only it knows.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/support/test_cluster.h"

namespace ring::testing::determined_config_e2e {
namespace {

namespace fs = std::filesystem;

std::string QuadraticModel() {
  return BinDir() + "/../examples/quadratic/model";
}

// All log lines of a trial, one string.
std::string TrialLogs(TestCluster& cluster, int trial) {
  std::string all;
  const auto answer = cluster.GetJson("/api/v1/trials/" + std::to_string(trial) + "/logs");
  for (const auto& l : answer["logs"]) all += l["line"].get<std::string>() + "\n";
  return all;
}

TEST(DeterminedConfigE2E, DataListEntrypointAndVariablesReachTheTrial) {
  TestCluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("agent-1", 1);
  // The quadratic model plus a script that shows what it was given.
  const std::string model = cluster.dir() + "/model";
  fs::copy(QuadraticModel(), model, fs::copy_options::recursive);
  std::ofstream(model + "/show.sh")
      << "printf 'arg=[%s]\\n' \"$1\"\n"
         "printf 'data=%s\\n' \"$RING_DATA\"\n"
         "printf 'vars=%s,%s,%s\\n' \"$FROM_LIST\" \"$CPU_ONLY\" \"${GPU_ONLY:-none}\"\n"
         "shift\nexec sh run.sh \"$@\"\n";
  const std::string config = cluster.WriteFile(
      "det.yaml",
      "name: det-keys\n"
      "entrypoint: [sh, show.sh, 'a b; $HOME']\n"
      "debug: false\n"
      "hyperparameters: {learning_rate: 0.05, batch_size: 8, report_every: 10, momentum: 0.0,\n"
      "                  checkpoint_every: 20, unused: null}\n"
      "searcher: {name: single, metric: validation_loss, max_length: 20}\n"
      "data: {url: 'https://example.com/d.tgz', n: 3}\n"
      "environment:\n"
      "  environment_variables: {cpu: [FROM_LIST=1, CPU_ONLY=yes], cuda: [GPU_ONLY=yes]}\n");
  auto created = cluster.Ring({"experiment", "create", config, model, "--follow"});
  ASSERT_EQ(created.exit_code, 0) << created.out << created.err;
  // The ignored key is reported on submit.
  EXPECT_NE(created.err.find("ring: warning: " + config + ":3: debug is a Determined key Ringmaster ignores"),
            std::string::npos)
      << created.err;
  // Logs may land a moment after the experiment ends.
  std::string logs;
  TestCluster::WaitFor(
      [&] {
        logs = TrialLogs(cluster, 1);
        return logs.find("vars=") != std::string::npos;
      },
      std::chrono::seconds(10));
  EXPECT_NE(logs.find("arg=[a b; $HOME]"), std::string::npos) << logs;  // no shell between
  EXPECT_NE(logs.find(R"(data={"n":3,"url":"https://example.com/d.tgz"})"), std::string::npos) << logs;
  EXPECT_NE(logs.find("vars=1,yes,none"), std::string::npos) << logs;  // cpu list only on CPU slots
  EXPECT_EQ(cluster.GetJson("/api/v1/trials/1")["total_batches"], 20);
}

TEST(DeterminedConfigE2E, ConfigOverridesAndTestMode) {
  TestCluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("agent-1", 2);
  const std::string config = SourceDir() + "/configs/experiments/quadratic.yaml";

  // --config: nested keys with dots, values as YAML scalars.
  auto created = cluster.Ring({"experiment", "create", config, QuadraticModel(), "--config",
                               "searcher.max_length.batches=60", "--config", "name=overridden", "--follow"});
  ASSERT_EQ(created.exit_code, 0) << created.out << created.err;
  EXPECT_EQ(cluster.GetJson("/api/v1/experiments/1")["name"], "overridden");
  EXPECT_EQ(cluster.GetJson("/api/v1/trials/1")["total_batches"], 60);
  auto bad = cluster.Ring({"experiment", "create", config, QuadraticModel(), "--config", "searcher"});
  EXPECT_EQ(bad.exit_code, 1) << bad.out << bad.err;
  EXPECT_NE(bad.err.find("--config expects key=value"), std::string::npos) << bad.err;

  // --test: one short trial, stopped after its first validation.
  auto test = cluster.Ring({"experiment", "create", config, QuadraticModel(), "--test"});
  ASSERT_EQ(test.exit_code, 0) << test.out << test.err;
  EXPECT_NE(test.out.find("Test succeeded: trial 2"), std::string::npos) << test.out;
  const auto exp = cluster.GetJson("/api/v1/experiments/2");
  EXPECT_EQ(exp["name"], "quadratic (test)");
  EXPECT_TRUE(TestCluster::WaitFor(
      [&] {
        const std::string state = cluster.GetJson("/api/v1/experiments/2")["state"];
        return state == "CANCELED" || state == "COMPLETED";
      },
      std::chrono::seconds(30)));
  const auto trial = cluster.GetJson("/api/v1/trials/2");
  EXPECT_LE(trial["total_batches"].get<int64_t>(), 1) << trial.dump();
  EXPECT_FALSE(trial["best_validation"].is_null());

  // --test of a trial that fails is a failure.
  const std::string failing = cluster.WriteFile("failing.yaml",
                                                "name: failing\nentrypoint: exit 3\n"
                                                "searcher: {name: single, metric: validation_loss}\n");
  auto failed = cluster.Ring({"experiment", "create", failing, QuadraticModel(), "--test"});
  EXPECT_EQ(failed.exit_code, 1) << failed.out << failed.err;
  EXPECT_NE(failed.err.find("before its trial reported a validation"), std::string::npos) << failed.err;
}

TEST(DeterminedConfigE2E, ConfigCheckAsksTheMasterWhatOnlyItKnows) {
  TestCluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("agent-1", 2);
  const std::string config = cluster.WriteFile("check.yaml",
                                               "name: c\n"
                                               "entrypoint: sh run.sh\n"
                                               "searcher: {name: single, metric: loss}\n"
                                               "resources: {slots_per_trial: 3}\n"
                                               "checkpoint_storage: {host_path: /etc}\n"
                                               "profiling: {enabled: true}\n");
  // Offline the config alone is valid, and the answer says what it could not check.
  auto offline = RunCommand({BinDir() + "/ring", "config", "check", config}, {}, std::chrono::seconds(30));
  EXPECT_EQ(offline.exit_code, 0) << offline.out << offline.err;
  EXPECT_NE(offline.out.find("Not checked offline"), std::string::npos) << offline.out;
  EXPECT_NE(offline.out.find("check.yaml:6: warning: profiling"), std::string::npos) << offline.out;
  // The master finds the storage root and the slots no agent can hold.
  auto online = cluster.Ring({"config", "check", config});
  EXPECT_EQ(online.exit_code, 1) << online.out << online.err;
  EXPECT_NE(online.out.find("check.yaml:5: error: checkpoint_storage.host_path"), std::string::npos)
      << online.out;
  EXPECT_NE(online.out.find("slots_per_trial"), std::string::npos) << online.out;
  EXPECT_NE(online.out.find("warning: profiling"), std::string::npos) << online.out;
  // The dry run created nothing.
  EXPECT_TRUE(cluster.GetJson("/api/v1/experiments")["experiments"].empty());
  // The route answers every error of a config in one answer.
  int status = 0;
  auto answer =
      cluster.PostJson("/api/v1/experiments/check",
                       {{"config", "name: ''\nentrypoint: []\nsearcher: {name: grid2}\n"}}, &status);
  EXPECT_EQ(status, 200);
  EXPECT_EQ(answer["valid"], false);
  EXPECT_EQ(answer["errors"].size(), 3u) << answer.dump();
}

}  // namespace
}  // namespace ring::testing::determined_config_e2e
