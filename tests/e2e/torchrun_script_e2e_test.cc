// An unmodified torchrun-style script on a real cluster: the example config
// and folder (examples/torchrun-script) on two agents with one CPU slot each,
// so its two ranks run under different agents and set up their Gloo process
// group over loopback through MASTER_ADDR and MASTER_PORT alone. The trial
// and the experiment complete, and both ranks' own checks passed.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>

#include "tests/support/python_torch.h"
#include "tests/support/test_cluster.h"

namespace ring::testing::torchrun_script_e2e {
namespace {

using namespace std::chrono_literals;

TEST(TorchrunScriptE2E, UnmodifiedScriptTrainsOnTwoAgentsAndCompletes) {
  if (!PythonHasTorch())
    GTEST_SKIP() << "/usr/bin/python3 cannot import torch with Gloo (install python3-torch to run this test)";
  // Keep the ranks' traffic on loopback even where the host name resolves to
  // another interface (agents and their trials inherit this environment).
  if (!HostnameIsLoopback()) setenv("GLOO_SOCKET_IFNAME", "lo", 1);

  TestCluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("agent-1", 1);
  cluster.StartAgent("agent-2", 1);
  auto created = cluster.Ring({"--json", "experiment", "create",
                               SourceDir() + "/configs/experiments/torchrun-script.yaml",
                               SourceDir() + "/examples/torchrun-script"});
  ASSERT_EQ(created.exit_code, 0) << created.out << created.err;
  const int64_t id = nlohmann::json::parse(created.out, nullptr, false).value("id", int64_t{0});
  ASSERT_GT(id, 0) << created.out;
  auto waited = cluster.Ring({"experiment", "wait", std::to_string(id)});
  ASSERT_EQ(waited.exit_code, 0) << waited.out << waited.err;

  auto exp = cluster.GetJson("/api/v1/experiments/" + std::to_string(id));
  EXPECT_EQ(exp["state"], "COMPLETED") << exp.dump();
  auto trials = cluster.GetJson("/api/v1/experiments/" + std::to_string(id) + "/trials")["trials"];
  ASSERT_EQ(trials.size(), 1u) << trials.dump();
  EXPECT_EQ(trials[0]["state"], "COMPLETED") << trials[0].dump();
  EXPECT_EQ(trials[0]["restarts"], 0);
  const std::string trial = std::to_string(trials[0]["id"].get<int64_t>());

  // One allocation, its two ranks on the two agents, in agent id order.
  auto allocations = cluster.GetJson("/api/v1/trials/" + trial + "/allocations")["allocations"];
  ASSERT_EQ(allocations.size(), 1u) << allocations.dump();
  EXPECT_EQ(allocations[0]["exit_code"], 0) << allocations[0].dump();
  const auto& placements = allocations[0]["placements"];
  ASSERT_EQ(placements.size(), 2u) << allocations[0].dump();
  EXPECT_EQ(placements[0]["agent_id"], "agent-1");
  EXPECT_EQ(placements[1]["agent_id"], "agent-2");

  // Both ranks trained together and passed their own checks.
  auto logs = cluster.GetJson("/api/v1/trials/" + trial + "/logs?limit=1000")["logs"];
  std::set<int> passed, up;
  for (const auto& l : logs) {
    const std::string line = l["line"];
    const int rank = l["rank"];
    if (line == "rank " + std::to_string(rank) + " of 2: all checks passed") passed.insert(rank);
    if (line == "rank " + std::to_string(rank) + " of 2: process group up") up.insert(rank);
    EXPECT_EQ(line.find("FAILED"), std::string::npos) << line;
  }
  EXPECT_EQ(up, (std::set<int>{0, 1})) << logs.dump();
  EXPECT_EQ(passed, (std::set<int>{0, 1})) << logs.dump();
}

}  // namespace
}  // namespace ring::testing::torchrun_script_e2e
