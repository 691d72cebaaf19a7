// The whole path a user takes: `ring experiment create` → master → agent →
// the real quadratic trial process → metrics in SQLite → `ring` and REST.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <iomanip>
#include <sstream>

#include "tests/support/test_cluster.h"

namespace ring::testing::quadratic_e2e {
namespace {

TEST(QuadraticE2E, ExperimentCompletesWithMetricsAndLogs) {
  TestCluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("agent-1", 2);
  const std::string model = BinDir() + "/../examples/quadratic/model";
  const std::string config = SourceDir() + "/configs/experiments/quadratic.yaml";
  ASSERT_TRUE(std::filesystem::exists(model + "/run.sh")) << model;

  auto created = cluster.Ring({"experiment", "create", config, model, "--follow"});
  ASSERT_EQ(created.exit_code, 0) << created.out << created.err;
  EXPECT_NE(created.out.find("Created experiment 1"), std::string::npos) << created.out;

  auto exp = cluster.GetJson("/api/v1/experiments/1");
  EXPECT_EQ(exp["state"], "COMPLETED");
  EXPECT_EQ(exp["best_trial_id"], 1);
  EXPECT_DOUBLE_EQ(exp["progress"].get<double>(), 1.0);
  EXPECT_FALSE(exp["ended_at"].is_null());

  auto trial = cluster.GetJson("/api/v1/trials/1");
  EXPECT_EQ(trial["state"], "COMPLETED");
  EXPECT_EQ(trial["total_batches"], 500);
  EXPECT_EQ(trial["hparams"]["learning_rate"], 0.05);

  auto training = cluster.GetJson("/api/v1/trials/1/metrics?kind=training")["metrics"];
  ASSERT_EQ(training.size(), 10u) << training.dump();  // every 50 of 500 batches
  EXPECT_EQ(training[0]["batches"], 50);
  EXPECT_EQ(training[9]["batches"], 500);
  // SGD makes progress on the training loss.
  const auto first_loss = training[0]["metrics"].begin().value().get<double>();
  const auto last_loss = training[9]["metrics"].begin().value().get<double>();
  EXPECT_LT(last_loss, first_loss);

  auto validation = cluster.GetJson("/api/v1/trials/1/metrics?kind=validation")["metrics"];
  ASSERT_FALSE(validation.empty());
  const double final_loss = validation.back()["metrics"]["validation_loss"].get<double>();
  EXPECT_TRUE(std::isfinite(final_loss));
  EXPECT_EQ(validation.back()["batches"], 500);
  double best = final_loss;
  for (const auto& v : validation) best = std::min(best, v["metrics"]["validation_loss"].get<double>());
  EXPECT_DOUBLE_EQ(trial["best_validation"].get<double>(), best);

  // The master's metrics saw this run: no token needed, no secrets inside.
  {
    auto anonymous = cluster.NewClient();
    auto scraped = anonymous->Get("/metrics");
    ASSERT_TRUE(scraped.ok());
    ASSERT_EQ(scraped->status, 200);
    const std::string& m = scraped->body;
    EXPECT_NE(
        m.find(R"(ringmaster_api_requests_total{code="200",method="GET",route="/api/v1/experiments/{id}"})"),
        std::string::npos)
        << m;
    EXPECT_NE(m.find(R"(ringmaster_scheduler_pass_duration_seconds_count{pool="default"})"),
              std::string::npos);
    EXPECT_NE(m.find(R"(ringmaster_agents{pool="default",state="connected"} 1)"), std::string::npos);
    EXPECT_NE(m.find(R"(ringmaster_slots{pool="default",state="free"} 2)"), std::string::npos);
    EXPECT_NE(m.find("ringmaster_sqlite_write_duration_seconds_count"), std::string::npos);
    EXPECT_EQ(m.find(cluster.admin_token()), std::string::npos);
  }

  auto allocs = cluster.GetJson("/api/v1/trials/1/allocations")["allocations"];
  ASSERT_EQ(allocs.size(), 1u);
  EXPECT_EQ(allocs[0]["exit_reason"], "exited with code 0");

  // The CLI shows the result.
  auto describe = cluster.Ring({"experiment", "describe", "1"});
  ASSERT_EQ(describe.exit_code, 0) << describe.err;
  EXPECT_NE(describe.out.find("COMPLETED"), std::string::npos) << describe.out;
  EXPECT_NE(describe.out.find("validation_loss"), std::string::npos) << describe.out;
  auto json = cluster.Ring({"--json", "experiment", "describe", "1"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(json.out.find("\"COMPLETED\""), std::string::npos) << json.out;
  EXPECT_EQ(cluster.Ring({"experiment", "wait", "1"}).exit_code, 0);
  auto list = cluster.Ring({"experiment", "list"});
  EXPECT_NE(list.out.find("quadratic"), std::string::npos) << list.out;

  // Logs over REST and through the CLI.
  auto logs = cluster.GetJson("/api/v1/trials/1/logs")["logs"];
  ASSERT_FALSE(logs.empty());
  auto cli_logs = cluster.Ring({"trial", "logs", "1"});
  EXPECT_EQ(cli_logs.exit_code, 0) << cli_logs.err;
  EXPECT_NE(cli_logs.out.find(logs[0]["line"].get<std::string>()), std::string::npos) << cli_logs.out;

  // Agents list shows the slots free again, and the work directory is gone.
  auto agents = cluster.Ring({"agent", "list"});
  EXPECT_NE(agents.out.find("agent-1"), std::string::npos) << agents.out;
  EXPECT_TRUE(
      TestCluster::WaitFor([&] { return !std::filesystem::exists(cluster.dir() + "/agent-agent-1/1.0.r0"); },
                           std::chrono::seconds(5)));
}

}  // namespace
}  // namespace ring::testing::quadratic_e2e
