// Real master, real agents, real trial processes: what happens when a trial
// fails and when an agent dies under a running trial.
#include <signal.h>
#include <sys/wait.h>

#include <gtest/gtest.h>

#include "tests/support/test_cluster.h"

namespace ring::testing::agent_loss_e2e {
namespace {

std::string SleeperConfig(int max_restarts) {
  return "name: sleeper\n"
         "entrypoint: ./train.sh\n"
         "searcher:\n  name: single\n  metric: validation_loss\n  max_length:\n    batches: 10\n"
         "max_restarts: " +
         std::to_string(max_restarts) + "\n";
}

nlohmann::json Allocations(TestCluster& c, int64_t trial) {
  return c.GetJson("/api/v1/trials/" + std::to_string(trial) + "/allocations")["allocations"];
}

TEST(AgentLossE2E, KilledAgentEndsItsAllocationAsAgentLost) {
  TestCluster cluster;
  cluster.StartMaster({.heartbeat_timeout_ms = 2000, .reconnect_window_ms = 1500});
  auto& agent = cluster.StartAgent("doomed", 2);
  // The trial outlives its SIGKILLed agent; it leaves its pid so the test can stop it.
  auto model = cluster.MakeModelDir(
      "model", {{"train.sh",
                 "#!/bin/sh\necho $$ > \"$PID_DIR/trial.pid\"\necho started rank $RANK\nexec sleep 300\n"}});
  auto config = cluster.WriteFile(
      "exp.yaml", SleeperConfig(0) + "environment:\n  variables:\n    PID_DIR: " + cluster.dir() + "\n");
  struct KillOrphan {
    std::string pid_file;
    ~KillOrphan() {
      const std::string pid = ReadFileText(pid_file);
      if (!pid.empty()) ::kill(std::stoi(pid), SIGKILL);
    }
  } orphan{cluster.dir() + "/trial.pid"};
  auto created = cluster.Ring({"experiment", "create", config, model});
  ASSERT_EQ(created.exit_code, 0) << created.err;

  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        auto allocs = Allocations(cluster, 1);
        return !allocs.empty() && allocs[0]["state"] == "RUNNING";
      },
      std::chrono::seconds(30)))
      << Allocations(cluster, 1).dump();
  ASSERT_TRUE(TestCluster::WaitFor([&] { return !cluster.GetJson("/api/v1/trials/1/logs")["logs"].empty(); },
                                   std::chrono::seconds(10)));

  const auto killed_at = std::chrono::steady_clock::now();
  agent.Signal(SIGKILL);
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Allocations(cluster, 1)[0]["state"] == "TERMINATED"; },
                                   std::chrono::seconds(15)));
  const auto took = std::chrono::steady_clock::now() - killed_at;
  auto alloc = Allocations(cluster, 1)[0];
  EXPECT_EQ(alloc["exit_reason"], "agent lost");
  // The closed connection opens the reconnect window (1.5 s); lost when it ends.
  EXPECT_GE(took, std::chrono::milliseconds(1500 - 200));
  EXPECT_LT(took, std::chrono::milliseconds(1500 + 1500));
  auto agents = cluster.GetJson("/api/v1/agents")["agents"];
  ASSERT_EQ(agents.size(), 1u);
  EXPECT_EQ(agents[0]["state"], "lost");
  // Losing an agent is not the trial's fault: it waits for another agent,
  // without counting a restart (max_restarts is 0 here).
  auto trial = cluster.GetJson("/api/v1/trials/1");
  EXPECT_EQ(trial["state"], "ACTIVE");
  EXPECT_EQ(trial["restarts"], 0);
  auto allocs = Allocations(cluster, 1);
  ASSERT_EQ(allocs.size(), 2u);
  EXPECT_EQ(allocs[1]["state"], "PENDING");
}

TEST(AgentLossE2E, FailingTrialIsRestartedThenErrorsAndItsLogsAreKept) {
  TestCluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("a1", 1);
  auto model = cluster.MakeModelDir(
      "model", {{"train.sh", "#!/bin/sh\necho \"attempt $RING_ALLOCATION_ID\"\necho oops >&2\nexit 3\n"}});
  auto config = cluster.WriteFile("exp.yaml", SleeperConfig(1));
  ASSERT_EQ(cluster.Ring({"experiment", "create", config, model}).exit_code, 0);
  auto waited = cluster.Ring({"experiment", "wait", "1"});
  EXPECT_EQ(waited.exit_code, 1) << waited.out << waited.err;  // ended, but not COMPLETED

  EXPECT_EQ(cluster.GetJson("/api/v1/experiments/1")["state"], "ERROR");
  auto trial = cluster.GetJson("/api/v1/trials/1");
  EXPECT_EQ(trial["state"], "ERROR");
  EXPECT_EQ(trial["restarts"], 1);
  EXPECT_EQ(trial["last_exit_reason"], "rank 0 exited with code 3");
  auto described = cluster.Ring({"trial", "describe", "1"});
  EXPECT_NE(described.out.find("rank 0 exited with code 3"), std::string::npos) << described.out;
  auto allocs = Allocations(cluster, 1);
  ASSERT_EQ(allocs.size(), 2u);
  EXPECT_EQ(allocs[0]["exit_reason"], "rank 0 exited with code 3");
  EXPECT_EQ(allocs[0]["exit_code"], 3);

  auto logs = cluster.Ring({"trial", "logs", "1"});
  EXPECT_EQ(logs.exit_code, 0) << logs.err;
  EXPECT_NE(logs.out.find("attempt 1.0"), std::string::npos) << logs.out;
  EXPECT_NE(logs.out.find("attempt 1.1"), std::string::npos) << logs.out;
  EXPECT_NE(logs.out.find("oops"), std::string::npos) << logs.out;
}

TEST(AgentLossE2E, MasterStopsCleanlyOnSigtermWithAgentsConnected) {
  TestCluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("a1", 1);
  const int status = cluster.master()->Stop(std::chrono::seconds(10));
  EXPECT_TRUE(WIFEXITED(status)) << "the master died of signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace ring::testing::agent_loss_e2e
