// Per-node launch on a real cluster: two agents with 4 CPU slots each and a
// trial of slots_per_trial 8, launched per node by `ring experiment create
// --launch per-node` (the config itself leaves resources.launch at auto, and
// its entrypoint alone would mean per-slot). Exactly 2 processes start, one
// per agent, each with the launcher's variables for its node, and each
// starts its 4 workers itself (tests/e2e/data/per_node/node.py) under
// `determined.launch.wrap_rank`, whose "[rank=N] " prefix files each
// worker's lines under its rank; the trial completes.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "tests/support/test_cluster.h"

namespace ring::testing::per_node_launch_e2e {
namespace {

std::map<std::string, std::string> Fields(const std::string& line) {
  std::map<std::string, std::string> out;
  std::istringstream in(line);
  std::string word;
  while (in >> word)
    if (auto eq = word.find('='); eq != std::string::npos) out[word.substr(0, eq)] = word.substr(eq + 1);
  return out;
}

TEST(PerNodeLaunchE2E, OneProcessPerAgentStartsItsOwnWorkers) {
  TestCluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("agent-1", 4);
  cluster.StartAgent("agent-2", 4);
  const std::string config = cluster.dir() + "/per-node.yaml";
  std::ofstream(config) << "name: per-node\nentrypoint: python3 node.py\nmax_restarts: 0\n"
                           "resources:\n  slots_per_trial: 8\nsearcher:\n  name: single\n  metric: loss\n";
  auto created = cluster.Ring({"--json", "experiment", "create", "--launch", "per-node", config,
                               SourceDir() + "/tests/e2e/data/per_node"});
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
  const std::string trial = std::to_string(trials[0]["id"].get<int64_t>());
  auto allocations = cluster.GetJson("/api/v1/trials/" + trial + "/allocations")["allocations"];
  ASSERT_EQ(allocations.size(), 1u) << allocations.dump();
  EXPECT_EQ(allocations[0]["end_cause"], "COMPLETED") << allocations[0].dump();
  EXPECT_EQ(allocations[0]["exit_code"], 0) << allocations[0].dump();
  const auto& placements = allocations[0]["placements"];
  ASSERT_EQ(placements.size(), 2u) << allocations[0].dump();

  auto logs = cluster.GetJson("/api/v1/trials/" + trial + "/logs?limit=1000")["logs"];
  std::map<int, std::map<std::string, std::string>> node_env;  // by process rank
  std::set<int> process_ranks;                                 // of the node processes' own lines
  std::set<int> filed_under;                                   // every line's
  std::set<std::string> worker_ranks;
  int done = 0;
  for (const auto& l : logs) {
    const std::string line = l["line"];
    const int rank = l["rank"].get<int>();
    filed_under.insert(rank);
    EXPECT_NE(line.rfind("[rank=", 0), 0u) << "a prefix left on the line: " << line;
    if (line.rfind("node env ", 0) == 0) {
      EXPECT_FALSE(node_env.count(rank)) << "a second process for rank " << rank;
      node_env[rank] = Fields(line);
      process_ranks.insert(rank);
    }
    if (line.rfind("worker rank ", 0) == 0) {
      const std::string worker = line.substr(12, line.find(' ', 12) - 12);
      worker_ranks.insert(worker);
      EXPECT_EQ(std::to_string(rank), worker) << "a worker's line is filed under its rank: " << l.dump();
    }
    if (line.find("workers exited [0, 0, 0, 0]") != std::string::npos) ++done;
  }
  // Exactly two processes: one per agent, ranks 0 and 1; their workers'
  // lines are filed under all eight ranks.
  EXPECT_EQ(process_ranks, (std::set<int>{0, 1})) << logs.dump();
  EXPECT_EQ(filed_under, (std::set<int>{0, 1, 2, 3, 4, 5, 6, 7})) << logs.dump();
  ASSERT_EQ(node_env.size(), 2u) << logs.dump();
  for (const auto& [rank, env] : node_env) {
    const std::string r = std::to_string(rank);
    EXPECT_EQ(env.at("NODE_RANK"), r);
    EXPECT_EQ(env.at("GROUP_RANK"), r);
    EXPECT_EQ(env.at("RING_CONTAINER_RANK"), r);
    EXPECT_EQ(env.at("NNODES"), "2");
    EXPECT_EQ(env.at("WORLD_SIZE"), "8");
    EXPECT_EQ(env.at("LOCAL_WORLD_SIZE"), "4");
    EXPECT_EQ(env.at("RING_SLOT_IDS"), "0,1,2,3");
    EXPECT_EQ(env.at("RING_LAUNCH"), "per_node");
    EXPECT_EQ(env.at("RANK"), "<unset>");
    EXPECT_EQ(env.at("LOCAL_RANK"), "<unset>");
    EXPECT_EQ(env.at("MASTER_ADDR"), node_env.at(0).at("MASTER_ADDR"));
    EXPECT_NE(env.at("MASTER_PORT"), "0");
    // Two addresses, rank order; rank 0's is MASTER_ADDR.
    const std::string addrs = env.at("RING_CONTAINER_ADDRS");
    ASSERT_NE(addrs.find(','), std::string::npos) << addrs;
    EXPECT_EQ(addrs.substr(0, addrs.find(',')), env.at("MASTER_ADDR"));
  }
  EXPECT_EQ(worker_ranks, (std::set<std::string>{"0", "1", "2", "3", "4", "5", "6", "7"})) << logs.dump();
  EXPECT_EQ(done, 2) << logs.dump();
  if (HasFailure()) cluster.DumpLogs();
}

}  // namespace
}  // namespace ring::testing::per_node_launch_e2e
