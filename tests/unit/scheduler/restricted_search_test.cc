// A restricted request (excluded agents, or a container image some agents
// cannot run) searches for victims as if the agents hidden for it were not
// in the pool. When that search fails, a later request that is not
// restricted must decide exactly as if the restricted one were not queued:
// the candidates on the hidden agents stay there for it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "master/scheduler/scheduler.h"

namespace ring {
namespace {

AgentView Agent(std::string id, int total, std::vector<std::string> runtimes = {}) {
  AgentView a{std::move(id), "default", "cpu", {}, total, true};
  a.container_runtimes = std::move(runtimes);
  return a;
}

RunningAllocation Running(std::string id, std::vector<Placement> on, int priority, int64_t started,
                          bool preemptible = true) {
  RunningAllocation r;
  r.allocation_id = std::move(id);
  r.experiment_id = 1;
  r.priority = priority;
  r.started_seq = started;
  r.preemptible = preemptible;
  r.placements = std::move(on);
  for (const auto& p : r.placements) r.slots += static_cast<int>(p.slot_ids.size());
  return r;
}

PendingRequest Request(std::string id, int slots, int priority, int64_t seq) {
  PendingRequest r;
  r.allocation_id = std::move(id);
  r.experiment_id = 2;
  r.slots = slots;
  r.priority = priority;
  r.queued_seq = seq;
  return r;
}

struct Case {
  const char* name;
  PoolInput input;  // the restricted request first, then "r2"
};

PoolInput Pool(std::vector<AgentView> agents, std::vector<RunningAllocation> running,
               std::vector<PendingRequest> pending) {
  PoolInput in;
  in.pool = "default";
  in.policy.type = PoolPolicy::Type::kPriority;
  in.policy.preemption = true;
  in.agents = std::move(agents);
  in.running = std::move(running);
  in.pending = std::move(pending);
  return in;
}

std::vector<Case> Cases() {
  std::vector<Case> cases;
  {
    // r1 avoids a and b; c runs work of higher priority than r1's. The
    // allocations on a and b free nothing r1 may use.
    auto r1 = Request("r1", 4, 10, 1);
    r1.excluded_agents = {"a", "b"};
    cases.push_back(
        {"excluded agents hold every victim",
         Pool({Agent("a", 4), Agent("b", 4), Agent("c", 4)},
              {Running("low-a", {{"a", {0, 1, 2, 3}}}, 50, 1), Running("low-b", {{"b", {0, 1, 2, 3}}}, 50, 2),
               Running("high-c", {{"c", {0, 1, 2, 3}}}, 5, 3)},
              {r1, Request("r2", 4, 10, 2)})});
  }
  {
    // r1 avoids a. low-ac spans a and c, so it frees slots r1 could use on
    // c, but c cannot reach 4 slots for r1 (pinned holds the rest); r2 can
    // reach 4 on a by stopping low-a and low-ac.
    auto r1 = Request("r1", 4, 10, 1);
    r1.excluded_agents = {"a"};
    cases.push_back(
        {"a victim that cannot help the excluding request",
         Pool({Agent("a", 4), Agent("c", 4)},
              {Running("low-ac", {{"a", {0, 1}}, {"c", {0, 1}}}, 50, 1),
               Running("low-a", {{"a", {2, 3}}}, 50, 2), Running("pinned", {{"c", {2, 3}}}, 50, 3, false)},
              {r1, Request("r2", 4, 10, 2)})});
  }
  {
    // r1 runs in a container: only a has a runtime, and a runs work of
    // higher priority; the allocation on b is r2's to stop.
    auto r1 = Request("r1", 4, 10, 1);
    r1.container = ContainerNeed{"", true, true};
    cases.push_back({"a container image hides agents without a runtime",
                     Pool({Agent("a", 4, {"podman"}), Agent("b", 4)},
                          {Running("high-a", {{"a", {0, 1, 2, 3}}}, 5, 1),
                           Running("low-b", {{"b", {0, 1, 2, 3}}}, 50, 2)},
                          {r1, Request("r2", 4, 10, 2)})});
  }
  return cases;
}

TEST(RestrictedSearchTest, AFailedRestrictedSearchLeavesLaterDecisionsAlone) {
  for (const auto& c : Cases()) {
    SCOPED_TRACE(c.name);
    PoolInput alone = c.input;
    alone.pending.erase(alone.pending.begin());
    const PoolDecision without = SchedulePool(alone);
    ASSERT_FALSE(without.preempt.empty()) << "r2 alone preempts: the case shows nothing otherwise";

    const PoolDecision with = SchedulePool(c.input);
    EXPECT_TRUE(with.pending_reasons.count("r1")) << "r1 finds no victim";
    for (const auto& [victim, request] : with.preempted_for) EXPECT_EQ(request, "r2") << victim;
    EXPECT_EQ(with.preempt, without.preempt);
    EXPECT_EQ(with.preempted_for, without.preempted_for);
    EXPECT_EQ(with.pending_reasons.at("r2"), without.pending_reasons.at("r2"));
  }
}

}  // namespace
}  // namespace ring
