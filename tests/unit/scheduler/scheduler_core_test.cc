// The pieces of the scheduler core on their own: water filling, the
// never-fits check, the placement index, and the victim order. Whole passes
// are tested by the scenario files (scheduler_scenario_test).
#include <gtest/gtest.h>

#include "master/scheduler/scheduler.h"
#include "master/scheduler/scheduling_fair_share.h"
#include "master/scheduler/scheduling_placement.h"
#include "master/scheduler/scheduling_priority.h"

namespace ring::scheduling {
namespace {

AgentView Agent(std::string id, int total, std::vector<int> free, std::string type = "cpu",
                bool enabled = true) {
  return {std::move(id), "gpu", std::move(type), std::move(free), total, enabled};
}

TEST(FairSharesTest, WeightsDivideThePool) {
  auto shares = FairShares({{1, 1, 100}, {2, 3, 100}}, 8);
  EXPECT_DOUBLE_EQ(shares[1], 2);
  EXPECT_DOUBLE_EQ(shares[2], 6);
}

TEST(FairSharesTest, DemandBelowShareGoesToTheOthers) {
  // Equal weights on 12 slots: 4 each, but experiment 1 only wants 2.
  auto shares = FairShares({{1, 1, 2}, {2, 1, 100}, {3, 1, 100}}, 12);
  EXPECT_DOUBLE_EQ(shares[1], 2);
  EXPECT_DOUBLE_EQ(shares[2], 5);
  EXPECT_DOUBLE_EQ(shares[3], 5);
}

TEST(FairSharesTest, WaterFillsInSeveralSteps) {
  // 1 wants 1, 2 wants 3 (weight 2), 3 and 4 want plenty: 1 -> 1, then
  // 19 left by weight 2+1+1: 2 would get 9.5 but wants 3, so 3 and 4 split 15.
  auto shares = FairShares({{1, 1, 1}, {2, 2, 3}, {3, 1, 50}, {4, 1, 50}}, 20);
  EXPECT_DOUBLE_EQ(shares[1], 1);
  EXPECT_DOUBLE_EQ(shares[2], 3);
  EXPECT_DOUBLE_EQ(shares[3], 8);
  EXPECT_DOUBLE_EQ(shares[4], 8);
}

TEST(FairSharesTest, EveryoneSatisfiedWhenThePoolIsLargeEnough) {
  auto shares = FairShares({{1, 1, 3}, {2, 5, 4}}, 100);
  EXPECT_DOUBLE_EQ(shares[1], 3);
  EXPECT_DOUBLE_EQ(shares[2], 4);
}

TEST(NeverFitsTest, NamesTheSizes) {
  std::vector<AgentView> agents = {Agent("a", 8, {}), Agent("b", 8, {0, 1, 2, 3, 4, 5, 6, 7})};
  EXPECT_EQ(NeverFits(agents, 8), std::nullopt);
  EXPECT_EQ(NeverFits(agents, 3), std::nullopt);
  EXPECT_EQ(NeverFits(agents, 24), std::nullopt) << "three whole agents: a shape, even if only two exist now";
  EXPECT_EQ(NeverFits(agents, 12),
            "can never fit: needs 12 slots, a multiple of no agent size in pool gpu (agents have 8 slots)");
  agents.push_back(Agent("c", 6, {}, "cuda", false));
  EXPECT_EQ(NeverFits(agents, 12), std::nullopt) << "two agents of 6, disabled ones count";
  EXPECT_EQ(
      NeverFits(agents, 10),
      "can never fit: needs 10 slots, a multiple of no agent size in pool gpu (agents have 6 or 8 slots)");
  EXPECT_EQ(NeverFits({}, 10), std::nullopt) << "no agents: nothing to judge by";
}

TEST(NeverFitsTest, SingleNodeNeedsOneAgentLargeEnough) {
  std::vector<AgentView> agents = {Agent("a", 4, {}), Agent("b", 4, {}), Agent("c", 6, {}, "cpu", false)};
  EXPECT_EQ(NeverFits(agents, 8), std::nullopt) << "two whole agents of 4";
  EXPECT_EQ(
      NeverFits(agents, 8, true),
      "can never fit: needs 8 slots on one agent (resources.is_single_node); the largest agent in pool gpu "
      "has 6");
  EXPECT_EQ(NeverFits(agents, 6, true), std::nullopt) << "c is large enough, disabled or not";
  EXPECT_EQ(NeverFits({}, 8, true), std::nullopt) << "no agents: nothing to judge by";
}

TEST(PoolSlotsTest, BestAndWorstFitWithTiesById) {
  std::vector<AgentView> agents = {Agent("c", 4, {0, 1, 2}), Agent("b", 4, {0, 1}), Agent("a", 4, {2, 3}),
                                   Agent("d", 4, {0, 1, 2, 3}, "cpu", false)};
  PoolSlots slots(agents);
  auto best = slots.FitNow({2}, PoolPolicy::Fit::kBest);
  ASSERT_TRUE(best);
  EXPECT_EQ(slots.view(best->agents[0]).id, "a");
  auto worst = slots.FitNow({2}, PoolPolicy::Fit::kWorst);
  ASSERT_TRUE(worst);
  EXPECT_EQ(slots.view(worst->agents[0]).id, "c") << "the disabled agent d has more free but gets nothing";
  EXPECT_FALSE(slots.FitNow({4}, PoolPolicy::Fit::kBest));
  auto a = slots.Take(*best, 2, "1.0");
  EXPECT_EQ(a.placements[0].slot_ids, (std::vector<int>{2, 3}));
  EXPECT_EQ(slots.view(slots.FitNow({2}, PoolPolicy::Fit::kBest)->agents[0]).id, "b");
}

TEST(PoolSlotsTest, WholeAgentsOfOneShape) {
  std::vector<AgentView> agents = {Agent("a", 4, {0, 1, 2, 3}), Agent("b", 4, {0, 1, 2, 3}, "cuda"),
                                   Agent("c", 4, {0, 1, 2, 3}, "cuda"), Agent("d", 4, {0, 1, 2, 3})};
  PoolSlots slots(agents);
  auto fit = slots.FitNow({8}, PoolPolicy::Fit::kBest);
  ASSERT_TRUE(fit);
  EXPECT_TRUE(fit->whole);
  ASSERT_EQ(fit->agents.size(), 2u);
  EXPECT_EQ(slots.view(fit->agents[0]).id, "a") << "cpu sorts before cuda";
  EXPECT_EQ(slots.view(fit->agents[1]).id, "d");
  slots.Take(*fit, 8, "1.0");
  fit = slots.FitNow({8}, PoolPolicy::Fit::kBest);
  ASSERT_TRUE(fit);
  EXPECT_EQ(slots.view(fit->agents[0]).id, "b");
  slots.Take(*fit, 8, "2.0");
  EXPECT_FALSE(slots.FitNow({1}, PoolPolicy::Fit::kBest));
}

TEST(PoolSlotsTest, OneAgentNeedNeverTakesWholeAgents) {
  std::vector<AgentView> agents = {Agent("a", 4, {0, 1, 2, 3}), Agent("b", 4, {0, 1, 2, 3}),
                                   Agent("c", 8, {0, 1, 2})};
  PoolSlots slots(agents);
  ASSERT_TRUE(slots.FitNow({8}, PoolPolicy::Fit::kBest));
  EXPECT_FALSE(slots.FitNow({8, Span::kOneAgent}, PoolPolicy::Fit::kBest));
  auto four = slots.FitNow({4, Span::kOneAgent}, PoolPolicy::Fit::kBest);
  ASSERT_TRUE(four);
  EXPECT_FALSE(four->whole);
  EXPECT_EQ(slots.view(four->agents[0]).id, "a");
  slots.AddLeaving(2, 5);
  EXPECT_FALSE(slots.FitNow({8, Span::kOneAgent}, PoolPolicy::Fit::kBest));
  auto later = slots.FitWhenLeft({8, Span::kOneAgent}, PoolPolicy::Fit::kBest);
  ASSERT_TRUE(later);
  EXPECT_EQ(slots.view(later->agents[0]).id, "c");
}

TEST(PoolSlotsTest, HeldAgentsAreSkippedAndLeavingSlotsCountLater) {
  std::vector<AgentView> agents = {Agent("a", 4, {0}), Agent("b", 4, {0, 1})};
  PoolSlots slots(agents);
  slots.AddLeaving(0, 3);
  EXPECT_FALSE(slots.FitNow({4}, PoolPolicy::Fit::kBest));
  auto later = slots.FitWhenLeft({4}, PoolPolicy::Fit::kBest);
  ASSERT_TRUE(later);
  EXPECT_EQ(slots.view(later->agents[0]).id, "a");
  slots.Hold(1);
  EXPECT_FALSE(slots.FitNow({2}, PoolPolicy::Fit::kBest)) << "b is held";
  EXPECT_EQ(slots.LargestFreeBlock(), 2) << "held slots are still physically free";
}

TEST(PriorityOrderTest, LowerNumberFirstThenFifo) {
  std::vector<PendingRequest> pending = {{"a", 1, 1, 42, 1, {}, 3},
                                         {"b", 1, 1, 10, 1, {}, 9},
                                         {"c", 1, 1, 42, 1, {}, 1},
                                         {"d", 1, 1, 99, 1, {}, 0}};
  EXPECT_EQ(PriorityOrder(pending), (std::vector<int>{1, 2, 0, 3}));
}

TEST(PriorityOrderTest, VictimsLowestPriorityThenNewest) {
  std::vector<RunningAllocation> running(5);
  running[0] = {"old-low", 1, 1, 60, 1, {}, 1};
  running[1] = {"new-low", 1, 1, 60, 1, {}, 5};
  running[2] = {"new-mid", 1, 1, 50, 1, {}, 9};
  running[3] = {"pinned", 1, 1, 99, 1, {}, 9, false};
  running[4] = {"going", 1, 1, 99, 1, {}, 9, true, true};
  EXPECT_EQ(PriorityVictimOrder(running), (std::vector<int>{1, 0, 2}));
}

TEST(SchedulePoolTest, EveryWaitingRequestHasAReasonAndOrderListsAll) {
  PoolInput in;
  in.pool = "gpu";
  in.agents = {Agent("a", 2, {0, 1})};
  in.pending = {{"1.0", 1, 2, 42, 1, {}, 1}, {"2.0", 1, -1, 42, 1, {}, 2}, {"3.0", 1, 1, 42, 1, {}, 3}};
  auto d = SchedulePool(in);
  ASSERT_EQ(d.assignments.size(), 1u);
  EXPECT_EQ(d.assignments[0].allocation_id, "1.0");
  EXPECT_EQ(d.pending_reasons.at("2.0"), "can never fit: needs at least one slot");
  EXPECT_EQ(d.pending_reasons.at("3.0"), "needs 1 slot on one agent; largest free block in pool gpu is 0");
  EXPECT_EQ(d.order, (std::vector<std::string>{"1.0", "2.0", "3.0"}));
}

// A task of no slot (a pool's zero_slot_tasks) runs on an agent without
// taking a slot, even on a full one; it waits only while there is no agent.
TEST(SchedulePoolTest, AZeroSlotRequestRunsOnAnAgentWithoutTakingASlot) {
  for (auto type : {PoolPolicy::Type::kPriority, PoolPolicy::Type::kFairShare}) {
    PoolInput in;
    in.pool = "cpu";
    in.policy.type = type;
    in.agents = {Agent("b", 1, {}), Agent("a", 1, {})};  // both full
    in.pending = {{"helper", -7, 0, 42, 1, {}, 1, true}, {"trial", 1, 1, 42, 1, {}, 2}};
    auto d = SchedulePool(in);
    ASSERT_EQ(d.assignments.size(), 1u);
    EXPECT_EQ(d.assignments[0].allocation_id, "helper");
    ASSERT_EQ(d.assignments[0].placements.size(), 1u);
    EXPECT_EQ(d.assignments[0].placements[0].agent_id, "a");  // the first in id order
    EXPECT_TRUE(d.assignments[0].placements[0].slot_ids.empty());
    EXPECT_TRUE(d.pending_reasons.count("trial"));

    in.agents.clear();
    auto none = SchedulePool(in);
    EXPECT_TRUE(none.assignments.empty());
    EXPECT_TRUE(none.pending_reasons.count("helper"));
  }
}

// A task's slots are one process's: its reasons say so, not a trial's key.
TEST(SchedulePoolTest, AOneProcessRequestsReasonsSayItIsOneProcess) {
  PoolInput in;
  in.pool = "cpu";
  in.agents = {Agent("a", 2, {0}), Agent("b", 1, {0})};
  PendingRequest wide{"command-1.0", -1, 3, 42, 1, {}, 1, true};
  wide.one_process = true;
  PendingRequest pair{"command-2.0", -2, 2, 42, 1, {}, 2, true};
  pair.one_process = true;
  in.pending = {wide, pair};
  auto d = SchedulePool(in);
  EXPECT_TRUE(d.assignments.empty());
  EXPECT_EQ(
      d.pending_reasons.at("command-1.0"),
      "can never fit: needs 3 slots on one agent (it is one process); the largest agent in pool cpu has 2");
  EXPECT_EQ(d.pending_reasons.at("command-2.0"),
            "needs 2 slots on one agent (it is one process); largest free block in pool cpu is 1");
}

}  // namespace
}  // namespace ring::scheduling
