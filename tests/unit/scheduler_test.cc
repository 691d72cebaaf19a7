#include "master/core/scheduler.h"

#include <gtest/gtest.h>

namespace ring {
namespace {

AgentView Agent(std::string id, int total, std::vector<int> free, std::string pool = "default") {
  return {std::move(id), std::move(pool), "cpu", std::move(free), total};
}

TEST(SchedulerTest, BestFitPicksTheFullestAgentThatFits) {
  auto out = Schedule({Agent("a", 4, {0, 1, 2, 3}), Agent("b", 4, {2, 3})}, {{"1.0", "default", 2}});
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].placements.size(), 1u);
  EXPECT_EQ(out[0].placements[0].agent_id, "b");
  EXPECT_EQ(out[0].placements[0].slot_ids, (std::vector<int>{2, 3}));
}

TEST(SchedulerTest, GangGetsAllSlotsOrNone) {
  auto out = Schedule({Agent("a", 2, {1}), Agent("b", 2, {0})}, {{"1.0", "default", 2}});
  EXPECT_TRUE(out.empty());
}

TEST(SchedulerTest, FifoAndSlotsAreNotGivenTwice) {
  auto out = Schedule({Agent("a", 2, {0, 1})},
                      {{"1.0", "default", 1}, {"2.0", "default", 1}, {"3.0", "default", 1}});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].allocation_id, "1.0");
  EXPECT_EQ(out[1].allocation_id, "2.0");
  EXPECT_NE(out[0].placements[0].slot_ids, out[1].placements[0].slot_ids);
}

TEST(SchedulerTest, PoolsAreSeparate) {
  auto out = Schedule({Agent("a", 2, {0, 1}, "gpu")}, {{"1.0", "default", 1}});
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(PendingReason({Agent("a", 2, {0, 1}, "gpu")}, {"1.0", "default", 1}),
            "no agents are connected in pool default");
}

TEST(SchedulerTest, LargeRequestsTakeWholeIdleAgents) {
  auto out =
      Schedule({Agent("a", 2, {0, 1}), Agent("b", 2, {0}), Agent("c", 2, {0, 1})}, {{"1.0", "default", 4}});
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].placements.size(), 2u);
  EXPECT_EQ(out[0].placements[0].agent_id, "a");
  EXPECT_EQ(out[0].placements[1].agent_id, "c");
  // 3 slots on agents of 2 cannot be placed as whole agents.
  EXPECT_TRUE(Schedule({Agent("a", 2, {0, 1}), Agent("c", 2, {0, 1})}, {{"1.0", "default", 3}}).empty());
}

TEST(SchedulerTest, PendingReasonSaysWhatIsMissing) {
  EXPECT_EQ(PendingReason({Agent("a", 4, {0})}, {"1.0", "default", 2}),
            "waiting for 2 free slots in pool default; the most free on one agent is 1");
}

}  // namespace
}  // namespace ring
