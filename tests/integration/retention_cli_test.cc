// Retention through the real CLI against a real master and agent: trials
// that ended lose their logs by their experiment's log_retention_days (or the
// master's), `ring master cleanup` says what went, `ring master info` shows
// the settings and the last pass, and bad settings stop the master at start.
#include <gtest/gtest.h>

#include <regex>

#include "common/archive.h"
#include "tests/support/test_cluster.h"

namespace ring::testing::retention_cli {
namespace {

class RetentionCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string config = cluster_.WriteFile(
        "master.yaml",
        "retention:\n  interval_minutes: 0\n  log_retention_days: 30\n  metrics_max_points: 500\n");
    TestCluster::MasterOptions options;
    options.extra_args = {"--config", config};
    cluster_.StartMaster(options);
    cluster_.StartAgent("agent-0", 2);
  }

  // An experiment whose one trial prints 200 lines and exits.
  int64_t Submit(const std::string& extra) {
    auto model = PackDirectory(cluster_.MakeModelDir(
        "chatty" + std::to_string(++models_), {{"run.sh", "for i in $(seq 200); do echo line $i; done\n"}}));
    EXPECT_TRUE(model.ok());
    int status = 0;
    auto created =
        cluster_.PostJson("/api/v1/experiments",
                          {{"config",
                            "name: chatty\nentrypoint: sh run.sh\nsearcher:\n  name: single\n  metric: loss\n"
                            "  max_length:\n    batches: 1\nmax_restarts: 0\n" +
                                extra},
                           {"model_definition", Base64Encode(*model)}},
                          &status);
    EXPECT_EQ(status, 201) << created.dump();
    return created.value("id", int64_t{0});
  }

  int64_t TrialOf(int64_t experiment) {
    int64_t trial = 0;
    TestCluster::WaitFor(
        [&] {
          auto trials = cluster_.GetJson("/api/v1/experiments/" + std::to_string(experiment) + "/trials");
          if (!trials.contains("trials") || trials["trials"].empty()) return false;
          const std::string state = trials["trials"][0].value("state", "");
          trial = trials["trials"][0].value("id", int64_t{0});
          return state == "COMPLETED" || state == "ERROR" || state == "CANCELED";
        },
        std::chrono::seconds(60));
    return trial;
  }

  size_t LogLines(int64_t trial) {
    auto logs = cluster_.GetJson("/api/v1/trials/" + std::to_string(trial) + "/logs?limit=1000");
    return logs.contains("logs") ? logs["logs"].size() : 0;
  }

  TestCluster cluster_;
  int models_ = 0;
};

TEST_F(RetentionCliTest, CleanupDeletesExpiredLogsByEachExperimentsSetting) {
  const int64_t quick = TrialOf(Submit("log_retention_days: 0\n"));
  const int64_t kept = TrialOf(Submit(""));
  ASSERT_GT(quick, 0);
  ASSERT_GT(kept, 0);
  ASSERT_TRUE(TestCluster::WaitFor([&] { return LogLines(quick) >= 200 && LogLines(kept) >= 200; },
                                   std::chrono::seconds(20)))
      << "the trials' logs did not arrive";
  const size_t quick_lines = LogLines(quick);

  auto info = cluster_.Ring({"master", "info"});
  ASSERT_EQ(info.exit_code, 0) << info.err;
  EXPECT_NE(info.out.find("retention:   logs 30 days, metrics thinned after 30 days, last pass none yet"),
            std::string::npos)
      << info.out;

  auto cleanup = cluster_.Ring({"master", "cleanup"});
  ASSERT_EQ(cleanup.exit_code, 0) << cleanup.err;
  EXPECT_NE(cleanup.out.find(std::to_string(quick_lines) + " log lines deleted from 1 trials"),
            std::string::npos)
      << cleanup.out;
  EXPECT_EQ(LogLines(quick), 0u);
  EXPECT_GE(LogLines(kept), 200u) << "the master's 30 days keep the other trial's logs";

  auto json = cluster_.Ring({"--json", "master", "cleanup"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  auto report = nlohmann::json::parse(json.out);
  EXPECT_EQ(report["log_lines_deleted"], 0) << "a second pass finds nothing";
  EXPECT_GT(report["database_bytes"].get<int64_t>(), 0);

  auto after = cluster_.Ring({"master", "info"});
  EXPECT_TRUE(std::regex_search(after.out, std::regex("last pass 20\\d\\d-"))) << after.out;
}

TEST(RetentionSettingsTest, BadRetentionSettingsStopTheMasterNamingTheKey) {
  TestCluster cluster;
  const std::string config =
      cluster.WriteFile("master.yaml", "retention:\n  interval_minutes: 60\n  log_retention_days: -3\n");
  auto run = RunCommand({BinDir() + "/ringmaster", "--config", config, "--listen", "127.0.0.1:0",
                         "--data-dir", cluster.dir() + "/bad"});
  EXPECT_NE(run.exit_code, 0);
  EXPECT_NE(run.err.find("retention.log_retention_days must be a number of days >= 0, or -1"),
            std::string::npos)
      << run.err;
  const std::string unknown = cluster.WriteFile("unknown.yaml", "retention:\n  log_days: 3\n");
  auto refused = RunCommand({BinDir() + "/ringmaster", "--config", unknown, "--listen", "127.0.0.1:0",
                             "--data-dir", cluster.dir() + "/bad"});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("unknown.yaml:2: unknown key \"retention.log_days\""), std::string::npos)
      << refused.err;
}

// An ended experiment's log retention changed after the fact: the next pass
// follows the new setting; bad values are refused and change nothing.
TEST_F(RetentionCliTest, AnEndedExperimentsLogRetentionChangesAfterTheFact) {
  const int64_t exp = Submit("");
  const int64_t trial = TrialOf(exp);
  ASSERT_TRUE(TestCluster::WaitFor([&] { return LogLines(trial) >= 200; }, std::chrono::seconds(20)));
  const std::string id = std::to_string(exp);
  ASSERT_EQ(cluster_.Ring({"master", "cleanup"}).exit_code, 0);
  EXPECT_GE(LogLines(trial), 200u) << "the master's 30 days keep them";

  auto refused = cluster_.Ring({"experiment", "set", "log-retention-days", id, "-5"});
  EXPECT_NE(refused.exit_code, 0);
  int status = 0;
  auto bad = cluster_.PatchJson("/api/v1/experiments/" + id, {{"log_retention_days", 40000}}, &status);
  EXPECT_EQ(status, 400) << bad.dump();
  EXPECT_NE(bad.dump().find("log_retention_days"), std::string::npos) << bad.dump();

  auto set = cluster_.Ring({"experiment", "set", "log-retention-days", id, "0"});
  ASSERT_EQ(set.exit_code, 0) << set.err;
  EXPECT_NE(set.out.find("log-retention-days set to 0"), std::string::npos) << set.out;
  EXPECT_NE(cluster_.GetJson("/api/v1/experiments/" + id)["config"].get<std::string>().find(
                "log_retention_days: 0"),
            std::string::npos);
  ASSERT_EQ(cluster_.Ring({"master", "cleanup"}).exit_code, 0);
  EXPECT_EQ(LogLines(trial), 0u) << "the new setting holds at the next pass";

  // Back to the master's setting: the key leaves the config.
  ASSERT_EQ(cluster_.Ring({"experiment", "set", "log-retention-days", id, "default"}).exit_code, 0);
  EXPECT_EQ(
      cluster_.GetJson("/api/v1/experiments/" + id)["config"].get<std::string>().find("log_retention_days"),
      std::string::npos);
}

}  // namespace
}  // namespace ring::testing::retention_cli
