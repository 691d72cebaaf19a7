// Tasks besides trials on a Slurm pool (docs/slurm.md "What runs on Slurm
// pools"), each in a Slurm job of its own whose job agent runs it, on the
// real Slurm of slurm_environment.h: a command runs to its exit code with
// its output in `ring cmd logs`; a shell opened with `ring shell open` in a
// real pseudo-terminal is relayed through its job agent (type, read,
// detach), and killed its job ends and its slot is free; a notebook's
// Jupyter is served through the task proxy. Each skips, saying why, where
// the machine cannot run Slurm (and the notebook where Jupyter is missing).
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/e2e/slurm_environment.h"
#include "tests/support/proxy_client.h"
#include "tests/support/raw_connection.h"
#include "tests/support/ring_in_a_terminal.h"
#include "tests/support/test_cluster.h"

namespace ring::testing::slurm_tasks_e2e {
namespace {

using namespace std::chrono_literals;

// A Slurm master whose kills take 2 s of grace (an interactive shell
// ignores SIGTERM), with its task proxy on loopback for the test's client.
void StartMaster(TestCluster& cluster, const SlurmCluster& slurm) {
  cluster.StartMaster(
      SlurmMasterOptions(cluster, slurm, 2, "", "kill_grace_ms: 2000\nproxy:\n  listen: 127.0.0.1:0\n"));
}

nlohmann::json Task(TestCluster& cluster, const std::string& kind, int64_t id) {
  return cluster.GetJson("/api/v1/" + kind + "/" + std::to_string(id));
}

int64_t SlotsUsed(TestCluster& cluster) {
  const auto pools = cluster.GetJson("/api/v1/pools");
  for (const auto& p : pools["pools"])
    if (p["name"] == "default") return p["slots_used"].get<int64_t>();
  return -1;
}

TEST(SlurmTasksE2E, ACommandRunsToItsExitCodeWithItsOutputInItsLogs) {
  RING_NEED_SLURM(slurm);
  TestCluster cluster;
  StartMaster(cluster, *slurm);
  auto run =
      cluster.Ring({"cmd", "run", "--", "sh", "-c", "echo ran-on-$(hostname) kind=$RING_TASK_KIND; exit 5"});
  EXPECT_EQ(run.exit_code, 5) << run.out << run.err;
  EXPECT_NE(run.out.find("kind=COMMAND"), std::string::npos) << run.out << run.err;
  const auto commands = cluster.GetJson("/api/v1/commands")["commands"];
  ASSERT_EQ(commands.size(), 1u) << commands.dump();
  const int64_t id = commands[0]["id"];
  EXPECT_EQ(commands[0]["end_cause"], "FAILED") << commands.dump();
  EXPECT_EQ(commands[0]["exit_code"], 5) << commands.dump();
  // Its output is kept with it: it ran on a node of the partition.
  auto logs = cluster.Ring({"cmd", "logs", std::to_string(id)});
  EXPECT_EQ(logs.exit_code, 0) << logs.err;
  EXPECT_TRUE(logs.out.find("ran-on-n1 kind=COMMAND") != std::string::npos ||
              logs.out.find("ran-on-n2 kind=COMMAND") != std::string::npos)
      << logs.out;
  // Its job ended with it and its slot is free.
  EXPECT_TRUE(slurm->WaitIdle(20s)) << slurm->Run({"squeue"}).out;
  EXPECT_TRUE(TestCluster::WaitFor([&] { return SlotsUsed(cluster) == 0; }, 10s))
      << cluster.GetJson("/api/v1/pools").dump();
}

TEST(SlurmTasksE2E, AShellsTerminalIsRelayedThroughItsJobAgent) {
  RING_NEED_SLURM(slurm);
  TestCluster cluster;
  StartMaster(cluster, *slurm);
  auto started = cluster.Ring({"shell", "start", "--detach"});
  ASSERT_EQ(started.exit_code, 0) << started.out << started.err;
  const int64_t id = std::atoll(started.out.c_str());
  ASSERT_GT(id, 0) << started.out;
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Task(cluster, "shells", id)["state"] == "RUNNING"; }, 60s))
      << Task(cluster, "shells", id).dump();
  const int64_t job = LiveSlurmJob(cluster);
  EXPECT_GT(job, 0) << cluster.GetJson("/api/v1/agents").dump();
  EXPECT_EQ(SlotsUsed(cluster), 1);
  {
    RingInATerminal ring({BinDir() + "/ring", "-m", cluster.url(), "shell", "open", std::to_string(id)},
                         {{"XDG_CONFIG_HOME", cluster.dir() + "/config"}});
    ASSERT_TRUE(ring.WaitFor("Ctrl-\\] detaches")) << ring.screen();
    ring.Type("echo on-$(hostname)-$((6*7))-$RING_TASK_KIND\r");
    ASSERT_TRUE(ring.WaitFor("on-n[12]-42-SHELL")) << ring.screen();
    ring.Type("\x1d");  // Ctrl-]: detach
    EXPECT_EQ(ring.Wait(), 0) << ring.screen();
    EXPECT_NE(ring.screen().find("it runs on"), std::string::npos) << ring.screen();
  }
  EXPECT_EQ(Task(cluster, "shells", id)["state"], "RUNNING") << "detaching ended the shell";

  // Killed: it ends, its Slurm job with it, and its slot is free.
  ASSERT_EQ(cluster.Ring({"shell", "kill", std::to_string(id)}).exit_code, 0);
  ASSERT_TRUE(TestCluster::WaitFor([&] { return !Task(cluster, "shells", id)["ended_at"].is_null(); }, 30s))
      << Task(cluster, "shells", id).dump();
  EXPECT_EQ(Task(cluster, "shells", id)["end_cause"], "USER_KILL");
  EXPECT_TRUE(slurm->WaitIdle(20s)) << slurm->Run({"squeue"}).out;
  EXPECT_TRUE(TestCluster::WaitFor([&] { return SlotsUsed(cluster) == 0; }, 10s))
      << cluster.GetJson("/api/v1/pools").dump();
  auto closed = cluster.Ring({"shell", "open", std::to_string(id)});
  EXPECT_NE(closed.exit_code, 0);
  EXPECT_NE(closed.err.find("has ended"), std::string::npos) << closed.err;
}

TEST(SlurmTasksE2E, ANotebookIsServedThroughTheProxy) {
  RING_NEED_SLURM(slurm);
  if (::access("/usr/bin/jupyter-notebook", X_OK) != 0 ||
      !std::filesystem::exists("/usr/share/jupyter/kernels/python3/kernel.json"))
    GTEST_SKIP() << "Jupyter Notebook is not installed (deploy/install-deps.sh installs it)";
  TestCluster cluster;
  StartMaster(cluster, *slurm);
  auto started = cluster.Ring({"notebook", "start"});
  ASSERT_EQ(started.exit_code, 0) << started.out << started.err;
  const std::string url = started.out.substr(0, started.out.find('\n'));
  ASSERT_NE(url.find("/proxy-ticket/"), std::string::npos) << started.out;
  const int64_t id = cluster.GetJson("/api/v1/notebooks")["notebooks"][0]["id"];
  EXPECT_EQ(Task(cluster, "notebooks", id)["service"]["name"], "jupyter");
  const std::string cookie = RedeemLink(url, id);
  ASSERT_FALSE(cookie.empty());
  Answer kernels = Exchange(PortOf(url), "GET", "/proxy/" + std::to_string(id) + "/api/kernels",
                            {{"Cookie", "ring_proxy=" + cookie}});
  EXPECT_EQ(kernels.status, 200) << kernels.body.substr(0, 500);
  EXPECT_EQ(kernels.body.substr(0, 1), "[") << kernels.body.substr(0, 500);
  ASSERT_EQ(cluster.Ring({"notebook", "kill", std::to_string(id)}).exit_code, 0);
  ASSERT_TRUE(
      TestCluster::WaitFor([&] { return !Task(cluster, "notebooks", id)["ended_at"].is_null(); }, 30s));
  EXPECT_TRUE(slurm->WaitIdle(20s)) << slurm->Run({"squeue"}).out;
}

}  // namespace
}  // namespace ring::testing::slurm_tasks_e2e
