// What an agent may report: process states and logs of the ranks the master
// placed on it, nothing else. In one allocation of two ranks over two
// agents, the agent holding rank 0 reports an exit and logs for rank 1 (on
// the other agent): refused and counted, and the lifecycle never hears of
// them; nor may a line of its own batch be filed under the other agent's
// rank.
#include <gtest/gtest.h>

#include "master/rm/agentrm/agent_rm.h"
#include "master/store/memory_store.h"
#include "tests/support/lifecycle_driver.h"
#include "tests/unit/lifecycle/lifecycle_test_fixture.h"

namespace ring::testing {
namespace {

using namespace std::chrono_literals;

class RecordingEvents : public RmEvents {
 public:
  void OnRankState(const std::string& node, const proto::StateChange& c) override {
    states.emplace_back(node, c.rank);
  }
  void OnLogs(const std::string& node, proto::LogBatch b) override { logs.emplace_back(node, b.rank); }
  void OnNodeConnected(const std::string&, const std::vector<proto::RunningProcess>&, SteadyTime) override {}
  void OnNodeLost(const std::string&) override {}
  void OnAllocationLost(const std::string&, const std::string&) override {}
  void OnAllocationNeverStarted(const std::string&, const std::string&) override {}
  void OnAllocationPreempted(const std::string&, const std::string&) override {}
  void OnNodeEvicted(const std::string&) override {}
  void OnCapacityChanged() override {}
  std::vector<std::pair<std::string, int>> states, logs;  // (node, rank) handed on
};

TEST(AgentRegistryJudgeReport, OnlyTheRanksPlacedOnTheAgent) {
  AgentRegistry registry;
  const auto now = std::chrono::steady_clock::now();
  registry.Connect({"a1", "default", "", "", {{0, "cpu", ""}}, {}}, nullptr, now);
  registry.Connect({"a2", "default", "", "", {{0, "cpu", ""}}, {}}, nullptr, now);
  registry.PlaceRanks("a1", "1.0", 0, 1, false);
  registry.PlaceRanks("a2", "1.0", 1, 1, false);
  using R = AgentRegistry::Report;
  EXPECT_EQ(registry.JudgeReport("a1", "1.0", 0), R::kPlacedHere);
  EXPECT_EQ(registry.JudgeReport("a2", "1.0", 1), R::kPlacedHere);
  EXPECT_EQ(registry.JudgeReport("a1", "1.0", 1), R::kForeign) << "rank 1 is a2's";
  EXPECT_EQ(registry.JudgeReport("a2", "1.0", 0), R::kForeign) << "rank 0 is a1's";
  EXPECT_EQ(registry.JudgeReport("a1", "1.0", 2), R::kForeign) << "a rank the allocation does not have";
  EXPECT_EQ(registry.JudgeReport("a1", "1.0", -1), R::kForeign);
  EXPECT_EQ(registry.JudgeReport("stranger", "1.0", 0), R::kForeign);
  EXPECT_EQ(registry.JudgeReport("a1", "9.0", 0), R::kNotLive) << "no agent holds it";
  registry.Release("1.0");
  EXPECT_EQ(registry.JudgeReport("a1", "1.0", 0), R::kNotLive) << "a late report after the end";
  EXPECT_EQ(registry.JudgeReport("a1", "1.0", 1), R::kNotLive);
}

// GET /api/v1/pools and /metrics count the agents instead of listing them:
// by pool and state, with every agent's slots and the connected ones' apart
// (a lost agent's slots are not free to use).
TEST(AgentRegistryCountByPool, AgentsByStateAndTheirSlots) {
  AgentRegistry registry;
  const auto now = std::chrono::steady_clock::now();
  registry.Connect({"a1", "cpu", "", "", {{0, "cpu", ""}, {1, "cpu", ""}}, {}}, nullptr, now + 10s);
  registry.Connect({"a2", "cpu", "", "", {{0, "cpu", ""}}, {}}, nullptr, now + 10s);
  registry.Connect({"g1", "gpu", "", "", {{0, "cuda", "u0"}}, {}}, nullptr, now + 10s);
  registry.Hold("a1", {1}, "1.0");
  registry.Hold("a2", {0}, "2.0");
  registry.Disconnect("a2", nullptr, now + 1s);
  registry.ExpireDeadlines(now + 2s, 0ms);  // a2's reconnect window is over: lost
  const auto counts = registry.CountByPool();
  ASSERT_EQ(counts.size(), 2u);
  const PoolAgentCounts& cpu = counts.at("cpu");
  EXPECT_EQ(cpu.agents.at(AgentState::kConnected), 1);
  EXPECT_EQ(cpu.agents.at(AgentState::kLost), 1);
  EXPECT_EQ(cpu.slots, 3);
  EXPECT_EQ(cpu.slots_used, 2);
  EXPECT_EQ(cpu.connected_slots, 2);
  EXPECT_EQ(cpu.connected_slots_used, 1);
  EXPECT_EQ(counts.at("gpu").agents.at(AgentState::kConnected), 1);
  EXPECT_EQ(counts.at("gpu").connected_slots_used, 0);
}

TEST(AgentRmReports, StatesAndLogsOfARankOnAnotherAgentOfTheAllocationAreRefused) {
  MemoryStore store;
  RecordingEvents events;
  std::map<AgentRefusal, int> refused;
  AgentRmOptions options;
  options.count_refusal = [&](AgentRefusal why) { ++refused[why]; };
  AgentRm rm(store, options, events);
  const auto now = std::chrono::steady_clock::now();
  auto c1 = std::make_shared<RecordingChannel>();
  auto c2 = std::make_shared<RecordingChannel>();
  rm.OnHello("a1", {"a1", "default", "10.0.0.1", "test", {{0, "cpu", ""}}, {}}, c1, now);
  rm.OnHello("a2", {"a2", "default", "10.0.0.2", "test", {{0, "cpu", ""}}, {}}, c2, now);
  LaunchSpec spec;
  spec.allocation_id = "1.0";
  spec.token = "tok";
  spec.placements = {{"a1", {0}}, {"a2", {0}}};
  spec.world_size = 2;
  spec.entrypoint = "sh run.sh";
  rm.Launch(spec);
  ASSERT_EQ(c1->Of<proto::Start>().size(), 1u);
  ASSERT_EQ(c1->Of<proto::Start>()[0].rank, 0);
  ASSERT_EQ(c2->Of<proto::Start>()[0].rank, 1);

  // a1, holding rank 0, speaks for rank 1: an exit, a state, logs.
  rm.OnMessage("a1", proto::StateChange{"1.0", 1, proto::ProcessState::kExited, 3, {}, "forged"}, now);
  rm.OnMessage("a1", proto::StateChange{"1.0", 1, proto::ProcessState::kRunning, {}, {}, ""}, now);
  rm.OnMessage("a1", proto::LogBatch{"1.0", 1, 1, {{0, "stdout", "forged", std::nullopt}}}, now);
  EXPECT_TRUE(events.states.empty()) << "a forged state reached the lifecycle";
  EXPECT_TRUE(events.logs.empty()) << "forged logs reached the lifecycle";
  EXPECT_EQ(refused[AgentRefusal::kForeignState], 2);
  EXPECT_EQ(refused[AgentRefusal::kForeignLogs], 1);

  // Each agent's own rank is handed on.
  rm.OnMessage("a1", proto::StateChange{"1.0", 0, proto::ProcessState::kExited, 0, {}, ""}, now);
  rm.OnMessage("a2", proto::LogBatch{"1.0", 1, 1, {{0, "stdout", "mine", std::nullopt}}}, now);
  EXPECT_EQ(events.states, (std::vector<std::pair<std::string, int>>{{"a1", 0}}));
  EXPECT_EQ(events.logs, (std::vector<std::pair<std::string, int>>{{"a2", 1}}));
  EXPECT_EQ(refused[AgentRefusal::kForeignState], 2);
  EXPECT_EQ(refused[AgentRefusal::kForeignLogs], 1);

  // After the allocation ended, reports on it are dropped quietly.
  rm.Release("1.0");
  rm.OnMessage("a1", proto::StateChange{"1.0", 1, proto::ProcessState::kExited, 3, {}, ""}, now);
  EXPECT_EQ(events.states.size(), 1u);
  EXPECT_EQ(refused[AgentRefusal::kForeignState], 2);
}

class AgentReportsLifecycleTest : public LifecycleFixture {
 protected:
  std::shared_ptr<RecordingChannel> ConnectAt(const std::string& id, const std::string& address) {
    auto channel = std::make_shared<RecordingChannel>();
    proto::Hello hello{id, "default", address, "test", {{0, "cpu", ""}}, {}};
    controller_.OnAgentHello(hello, channel, now_);
    return channel;
  }
  std::vector<LogRecord> Logs(int rank) {
    auto logs = store_.GetLogs(1, rank, 0, 100);
    EXPECT_TRUE(logs.ok());
    return logs.ok() ? *logs : std::vector<LogRecord>{};
  }
};

TEST_F(AgentReportsLifecycleTest, ARankZeroAgentCannotEndOrWriteTheLogsOfRankOne) {
  auto a = ConnectAt("node-a", "10.0.0.3");
  auto b = ConnectAt("node-b", "10.0.0.2");
  CreateFrom(
      "name: ddp\nentrypoint: sh run.sh\nsearcher:\n  name: single\n  metric: loss\n  max_length:\n"
      "    batches: 100\nresources:\n  slots_per_trial: 2\nmax_restarts: 0\n");
  ASSERT_EQ(a->Of<proto::Start>().size(), 1u);
  ASSERT_EQ(b->Of<proto::Start>().size(), 1u);
  ASSERT_EQ(a->Of<proto::Start>()[0].rank, 0);
  ASSERT_EQ(b->Of<proto::Start>()[0].rank, 1);
  const std::string alloc = a->Of<proto::Start>()[0].allocation_id;
  for (const auto& [node, rank] : {std::pair<std::string, int>{"node-a", 0}, {"node-b", 1}})
    controller_.OnAgentMessage(
        node, proto::StateChange{alloc, rank, proto::ProcessState::kRunning, {}, {}, ""}, now_);
  ASSERT_EQ(store_.GetAllocation(alloc)->state, AllocationState::kRunning);

  // node-a fails rank 1 and writes lines for it, in a batch of rank 1 and
  // as a prefixed line of its own rank 0's batch.
  controller_.OnAgentMessage("node-a", proto::StateChange{alloc, 1, proto::ProcessState::kExited, 3, {}, "x"},
                             now_);
  controller_.OnAgentMessage(
      "node-a", proto::LogBatch{alloc, 1, 1, {{1, "stdout", "forged batch", std::nullopt}}}, now_);
  controller_.OnAgentMessage("node-a", proto::LogBatch{alloc, 0, 1, {{2, "stdout", "forged prefix", 1}}},
                             now_);

  EXPECT_EQ(store_.GetAllocation(alloc)->state, AllocationState::kRunning) << "the forged exit ended it";
  EXPECT_TRUE(a->Of<proto::Kill>().empty());
  EXPECT_TRUE(b->Of<proto::Kill>().empty()) << "rank 1 was killed for an exit it never made";
  EXPECT_TRUE(Logs(1).empty()) << "node-a filed lines under rank 1";
  const auto own = Logs(0);
  ASSERT_EQ(own.size(), 1u) << "the prefixed line stays node-a's own rank's";
  EXPECT_EQ(own[0].line, "forged prefix");

  // node-b's own prefixed line is its rank's.
  controller_.OnAgentMessage("node-b", proto::LogBatch{alloc, 1, 1, {{3, "stdout", "rank one", 1}}}, now_);
  ASSERT_EQ(Logs(1).size(), 1u);
  EXPECT_EQ(Logs(1)[0].line, "rank one");
}

}  // namespace
}  // namespace ring::testing
