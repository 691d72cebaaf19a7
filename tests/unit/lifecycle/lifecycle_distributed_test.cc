// Distributed trials in the lifecycle core: the rank order over agents, the
// rendezvous store of each allocation (authorised by its token, dropped when
// it ends, fresh after a restart or recovery), and an unmodified torchrun-style
// script that never talks to the master.
#include <gtest/gtest.h>

#include <tuple>

#include "master/scheduler/rank_order.h"
#include "tests/support/lifecycle_driver.h"
#include "tests/unit/lifecycle/lifecycle_test_fixture.h"

namespace ring {
namespace {

using testing::RecordingChannel;
using namespace std::chrono_literals;

std::string DdpConfig(int slots, int max_restarts = 0) {
  return "name: ddp\nentrypoint: /usr/bin/python3 train.py\nsearcher:\n  name: single\n"
         "  metric: validation_loss\n  max_length:\n    batches: 100\nresources:\n  slots_per_trial: " +
         std::to_string(slots) + "\nmax_restarts: " + std::to_string(max_restarts) + "\n";
}

std::vector<std::string> AgentOrder(const std::vector<Placement>& placements) {
  std::vector<std::string> out;
  for (const auto& p : placements) out.push_back(p.agent_id);
  return out;
}

TEST(RankOrder, MostSlotsFirstThenAgentId) {
  std::vector<Placement> p = {{"b", {3}}, {"c", {5, 1}}, {"a", {2}}, {"d", {0, 4}}};
  OrderPlacementsForRanks(p);
  EXPECT_EQ(AgentOrder(p), (std::vector<std::string>{"c", "d", "a", "b"}));
  EXPECT_EQ(p[0].slot_ids, (std::vector<int>{1, 5}));  // local ranks follow slot ids
  EXPECT_EQ(p[1].slot_ids, (std::vector<int>{0, 4}));
}

TEST(RankOrder, SameResultWhateverTheInputOrder) {
  const std::vector<Placement> base = {{"n3", {0, 1}}, {"n1", {0, 1}}, {"n2", {1, 0}}, {"n0", {7}}};
  std::vector<int> idx = {0, 1, 2, 3};
  std::vector<std::string> first;
  do {
    std::vector<Placement> p;
    for (int i : idx) p.push_back(base[i]);
    OrderPlacementsForRanks(p);
    if (first.empty()) first = AgentOrder(p);
    EXPECT_EQ(AgentOrder(p), first);
    EXPECT_EQ(p[1].slot_ids, (std::vector<int>{0, 1}));
  } while (std::next_permutation(idx.begin(), idx.end()));
  EXPECT_EQ(first, (std::vector<std::string>{"n1", "n2", "n3", "n0"}));
}

class DistributedControllerTest : public testing::LifecycleFixture {
 protected:
  std::shared_ptr<RecordingChannel> ConnectAt(const std::string& id, const std::string& address, int slots) {
    auto channel = std::make_shared<RecordingChannel>();
    proto::Hello hello{id, "default", address, "test", {}, {}};
    for (int i = 0; i < slots; ++i) hello.slots.push_back({i, "cpu", ""});
    controller_.OnAgentHello(hello, channel, now_);
    return channel;
  }
  void Exit(const std::string& agent, const std::string& alloc, int rank, int code) {
    controller_.OnAgentMessage(
        agent, proto::StateChange{alloc, rank, proto::ProcessState::kExited, code, {}, ""}, now_);
  }
  Status Set(const std::string& alloc, const std::string& token, const std::string& key, std::string value) {
    return controller_.RendezvousSet(alloc, token, key, std::move(value));
  }
  std::string Value(const std::string& alloc, const std::string& token, const std::string& key) {
    auto got = controller_.RendezvousGet(alloc, token, key);
    if (!got.ok()) return "<" + got.status().ToString() + ">";
    return got->value ? *got->value : "<unset>";
  }
};

TEST_F(DistributedControllerTest, RankZeroGoesToTheFirstAgentInRankOrderAndItsAddressIsMasterAddr) {
  // Connected in the other order: the ranks still follow agent ids.
  auto b = ConnectAt("node-b", "10.0.0.2", 1);
  auto a = ConnectAt("node-a", "10.0.0.3", 1);
  CreateFrom(DdpConfig(2));
  ASSERT_EQ(a->Of<proto::Start>().size(), 1u);
  ASSERT_EQ(b->Of<proto::Start>().size(), 1u);
  const auto sa = a->Of<proto::Start>()[0];
  const auto sb = b->Of<proto::Start>()[0];
  EXPECT_EQ(sa.rank, 0);
  EXPECT_EQ(sb.rank, 1);
  EXPECT_EQ(sa.world_size, 2);
  EXPECT_EQ(sa.local_rank, 0);
  EXPECT_EQ(sb.local_rank, 0);
  EXPECT_EQ(sa.local_world_size, 1);
  EXPECT_EQ(sa.master_addr, "10.0.0.3");
  EXPECT_EQ(sb.master_addr, "10.0.0.3");
  EXPECT_EQ(sa.master_port, sb.master_port);
  EXPECT_EQ(sa.allocation_token, sb.allocation_token);
  // Recorded in rank order, so the trial view and a recovered master agree.
  const auto recorded = store_.GetAllocation("1.0")->placements;
  ASSERT_EQ(recorded.size(), 2u);
  EXPECT_EQ(recorded[0].agent_id, "node-a");
  EXPECT_EQ(recorded[1].agent_id, "node-b");
}

TEST_F(DistributedControllerTest, RanksOfOneAgentFollowItsSlotIds) {
  auto a = ConnectAt("node-a", "10.0.0.3", 4);
  CreateFrom(DdpConfig(3));
  auto starts = a->Of<proto::Start>();
  ASSERT_EQ(starts.size(), 3u);
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(starts[r].rank, r);
    EXPECT_EQ(starts[r].local_rank, r);
    EXPECT_EQ(starts[r].local_world_size, 3);
    EXPECT_EQ(starts[r].slot_ids, std::vector<int>{r});
  }
}

TEST_F(DistributedControllerTest, RendezvousIsScopedToTheAllocationAndItsToken) {
  auto a = ConnectAt("node-a", "10.0.0.3", 2);
  CreateFrom(DdpConfig(1));
  CreateFrom(DdpConfig(1));
  auto starts = a->Of<proto::Start>();
  ASSERT_EQ(starts.size(), 2u);
  const std::string one = starts[0].allocation_id, two = starts[1].allocation_id;
  const std::string t1 = starts[0].allocation_token, t2 = starts[1].allocation_token;
  ASSERT_NE(one, two);

  ASSERT_TRUE(Set(one, t1, "rank/0", "addr-one").ok());
  EXPECT_EQ(Value(one, t1, "rank/0"), "addr-one");
  EXPECT_EQ(Value(two, t2, "rank/0"), "<unset>");  // another allocation's store
  // Another allocation's token, no token, an unknown allocation.
  EXPECT_EQ(Set(one, t2, "rank/0", "x").code(), ErrorCode::kUnauthenticated);
  EXPECT_EQ(controller_.RendezvousGet(one, t2, "rank/0").status().code(), ErrorCode::kUnauthenticated);
  EXPECT_EQ(controller_.RendezvousCheck(one, "", {"rank/0"}).status().code(), ErrorCode::kUnauthenticated);
  EXPECT_EQ(Set("9.0", t1, "k", "v").code(), ErrorCode::kNotFound);
  EXPECT_EQ(Value(one, t1, "rank/0"), "addr-one");  // the refused writes changed nothing
  auto check = controller_.RendezvousCheck(one, t1, {"rank/0", "rank/1"});
  ASSERT_TRUE(check.ok());
  EXPECT_EQ(check->set, std::vector<std::string>{"rank/0"});
  EXPECT_EQ(check->missing, std::vector<std::string>{"rank/1"});
}

TEST_F(DistributedControllerTest, AnEndedAllocationsStoreIsDroppedAndItsWaitersWoken) {
  auto a = ConnectAt("node-a", "10.0.0.3", 1);
  auto b = ConnectAt("node-b", "10.0.0.4", 1);
  CreateFrom(DdpConfig(2, 1));
  const auto start = a->Of<proto::Start>().at(0);
  const std::string token = start.allocation_token;
  ASSERT_TRUE(Set("1.0", token, "master", "10.0.0.3:29500").ok());
  int woken = 0;
  auto waiting = controller_.RendezvousGet("1.0", token, "never", [&] { ++woken; });
  ASSERT_TRUE(waiting.ok());
  ASSERT_NE(waiting->wait, 0u);

  Exit("node-b", "1.0", 1, 3);  // one rank fails: the allocation is stopped
  EXPECT_EQ(woken, 0);          // still running until every rank reported
  Exit("node-a", "1.0", 0, 143);
  EXPECT_EQ(store_.GetAllocation("1.0")->state, AllocationState::kTerminated);
  EXPECT_EQ(woken, 1);
  EXPECT_EQ(controller_.RendezvousGet("1.0", token, "master").status().code(), ErrorCode::kConflict);
  EXPECT_EQ(Set("1.0", token, "late", "v").code(), ErrorCode::kConflict);
  EXPECT_EQ(Set("1.0", "wrong", "late", "v").code(), ErrorCode::kUnauthenticated);

  // The restart is another allocation with its own token and an empty store.
  const auto restarted = a->Of<proto::Start>().at(1);
  ASSERT_EQ(restarted.allocation_id, "1.1");
  EXPECT_EQ(Value("1.1", restarted.allocation_token, "master"), "<unset>");
  EXPECT_EQ(Set("1.1", token, "master", "x").code(), ErrorCode::kUnauthenticated);
}

TEST_F(DistributedControllerTest, PendingAllocationHasNoStoreYet) {
  auto a = ConnectAt("node-a", "10.0.0.3", 2);
  CreateFrom(DdpConfig(2));
  CreateFrom(DdpConfig(2));  // waits for the first one's slots
  EXPECT_EQ(store_.GetAllocation("2.0")->state, AllocationState::kPending);
  const std::string running_token = a->Of<proto::Start>().at(0).allocation_token;
  EXPECT_EQ(Set("2.0", "", "k", "v").code(), ErrorCode::kUnauthenticated);
  EXPECT_EQ(Set("2.0", running_token, "k", "v").code(), ErrorCode::kUnauthenticated);
}

TEST_F(DistributedControllerTest, RecoveredMasterOpensEmptyStoresForRunningAllocations) {
  auto a = ConnectAt("node-a", "10.0.0.3", 1);
  CreateFrom(DdpConfig(1));
  const auto start = a->Of<proto::Start>().at(0);
  ASSERT_TRUE(Set("1.0", start.allocation_token, "k", "before").ok());

  testing::LifecycleDriver recovered(store_, options_);
  ASSERT_TRUE(recovered.Recover(now_).ok());
  auto got = recovered.RendezvousGet("1.0", start.allocation_token, "k");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_FALSE(got->value);  // in memory only: keys set before the restart are gone
  EXPECT_TRUE(recovered.RendezvousSet("1.0", start.allocation_token, "k", "after").ok());
}

// Per-node launch on two agents of two slots: one process per agent, ranks
// 0 and 1. A restarted master adopts them as such, so the second agent's
// process (rank 1, not rank 2) is heard, and both exits end the allocation.
TEST_F(DistributedControllerTest, ARestartedMasterKnowsAPerNodeAllocationsRanks) {
  auto a = ConnectAt("node-a", "10.0.0.3", 2);
  auto b = ConnectAt("node-b", "10.0.0.4", 2);
  CreateFrom(
      "name: ddp\nentrypoint: /usr/bin/python3 train.py\nsearcher:\n  name: single\n  metric: "
      "validation_loss\n"
      "  max_length:\n    batches: 100\nresources:\n  slots_per_trial: 4\n  launch: per_node\n");
  ASSERT_EQ(a->Of<proto::Start>().size(), 1u);
  ASSERT_EQ(b->Of<proto::Start>().size(), 1u);
  EXPECT_EQ(b->Of<proto::Start>().at(0).rank, 1);
  EXPECT_EQ(store_.GetAllocation("1.0")->processes, 2);

  testing::LifecycleDriver restarted(store_, options_);
  ASSERT_TRUE(restarted.Recover(now_).ok());
  for (const auto& [agent, address, rank] : std::vector<std::tuple<std::string, std::string, int>>{
           {"node-a", "10.0.0.3", 0}, {"node-b", "10.0.0.4", 1}}) {
    proto::Hello hello{
        agent, "default", address, "test", {{0, "cpu", ""}, {1, "cpu", ""}}, {{"1.0", rank, 42}}};
    restarted.OnAgentHello(hello, std::make_shared<RecordingChannel>(), now_);
  }
  restarted.OnAgentMessage("node-b", proto::StateChange{"1.0", 1, proto::ProcessState::kExited, 0, {}, ""},
                           now_);
  EXPECT_NE(store_.GetAllocation("1.0")->state, AllocationState::kTerminated);  // rank 0 still runs
  restarted.OnAgentMessage("node-a", proto::StateChange{"1.0", 0, proto::ProcessState::kExited, 0, {}, ""},
                           now_);
  auto alloc = store_.GetAllocation("1.0");
  EXPECT_EQ(alloc->state, AllocationState::kTerminated);
  EXPECT_EQ(alloc->exit_code, 0);
  EXPECT_EQ(store_.GetTrial(1)->state, RunState::kCompleted);
}

// A plain torch.distributed script: never asks for a searcher operation,
// reports nothing, and every rank exits 0. It completes, and so does its
// single-searcher experiment.
TEST_F(DistributedControllerTest, UnmodifiedScriptThatExitsZeroCompletes) {
  auto a = ConnectAt("node-a", "10.0.0.3", 1);
  auto b = ConnectAt("node-b", "10.0.0.4", 1);
  const int64_t exp_id = CreateFrom(DdpConfig(2));
  ASSERT_EQ(a->Of<proto::Start>().size(), 1u);
  Exit("node-b", "1.0", 1, 0);
  EXPECT_EQ(store_.GetTrial(1)->state, RunState::kActive);  // rank 0 still runs
  Exit("node-a", "1.0", 0, 0);
  auto alloc = store_.GetAllocation("1.0");
  EXPECT_EQ(alloc->exit_reason, "exited with code 0");
  EXPECT_EQ(alloc->exit_code, 0);
  auto trial = store_.GetTrial(1);
  EXPECT_EQ(trial->state, RunState::kCompleted);
  EXPECT_EQ(trial->restarts, 0);
  EXPECT_FALSE(trial->best_validation);
  auto exp = store_.GetExperiment(exp_id);
  EXPECT_EQ(exp->state, RunState::kCompleted);
  EXPECT_DOUBLE_EQ(exp->progress, 1.0);
  EXPECT_EQ(a->Of<proto::Start>().size(), 1u);  // not started again
  EXPECT_EQ(controller_.TrialOperation(exp_id, 1), std::nullopt);
}

}  // namespace
}  // namespace ring
