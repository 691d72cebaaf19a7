// The controller sharing a pool: a higher-priority experiment preempts a
// lower one, which checkpoints, goes back to the queue without counting a
// restart and resumes when the slot is free; disabled agents get no work.
#include <gtest/gtest.h>

#include "tests/unit/lifecycle/lifecycle_test_fixture.h"

namespace ring {
namespace {

using testing::RecordingChannel;

std::string Config(const std::string& name, int priority) {
  return "name: " + name +
         "\nentrypoint: ./run.sh\nsearcher:\n  name: single\n  metric: validation_loss\n  max_length:\n"
         "    batches: 10\nresources:\n  priority: " +
         std::to_string(priority) + "\n";
}

class ControllerSchedulingTest : public testing::LifecycleFixture {
 protected:
  void Exit(const std::string& allocation, int code) {
    controller_.OnAgentMessage(
        "agent-1", proto::StateChange{allocation, 0, proto::ProcessState::kExited, code, std::nullopt, ""},
        now_);
  }
};

TEST_F(ControllerSchedulingTest, HigherPriorityPreemptsAndTheVictimResumesWithoutARestart) {
  auto agent = Connect("agent-1", 1);
  CreateFrom(Config("low", 50));
  auto low = agent->Of<proto::Start>().at(0);
  controller_.OnAgentMessage("agent-1",
                             proto::StateChange{"1.0", 0, proto::ProcessState::kRunning, {}, {}, ""}, now_);
  EXPECT_FALSE(controller_.PreemptionRequested("1.0", low.allocation_token).value());

  CreateFrom(Config("high", 10));
  EXPECT_TRUE(controller_.PreemptionRequested("1.0", low.allocation_token).value());
  auto jobs = controller_.JobsJson();
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0]["allocation_id"], "1.0");  // running ones first
  EXPECT_TRUE(jobs[0]["preempting"]);
  EXPECT_EQ(jobs[1]["allocation_id"], "2.0");
  EXPECT_EQ(jobs[1]["priority"], 10);
  EXPECT_EQ(jobs[1]["position"], 1);

  ASSERT_TRUE(controller_.AcknowledgePreemption("1.0", low.allocation_token).ok());
  Exit("1.0", 0);
  EXPECT_EQ(store_.GetTrial(1)->state, RunState::kActive);
  EXPECT_EQ(store_.GetTrial(1)->restarts, 0);
  ASSERT_EQ(agent->Of<proto::Start>().size(), 2u);
  EXPECT_EQ(agent->Of<proto::Start>()[1].allocation_id, "2.0");  // the high one runs
  EXPECT_EQ(store_.GetAllocation("1.1")->state, AllocationState::kPending);

  // The high one finishes; the low one gets the slot back.
  auto high = agent->Of<proto::Start>()[1];
  ASSERT_TRUE(
      controller_.CompleteSearcherOperation("2.0", high.allocation_token, {{"length", 10}, {"metric", 1.0}})
          .value());
  Exit("2.0", 0);
  ASSERT_EQ(agent->Of<proto::Start>().size(), 3u);
  EXPECT_EQ(agent->Of<proto::Start>()[2].allocation_id, "1.1");
}

TEST_F(ControllerSchedulingTest, EqualPriorityDoesNotPreempt) {
  auto agent = Connect("agent-1", 1);
  CreateFrom(Config("first", 42));
  auto first = agent->Of<proto::Start>().at(0);
  CreateFrom(Config("second", 42));
  EXPECT_FALSE(controller_.PreemptionRequested("1.0", first.allocation_token).value());
  auto jobs = controller_.JobsJson();
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[1]["state"], "PENDING");
  EXPECT_FALSE(jobs[1]["pending_reason"].get<std::string>().empty());
}

// The scheduler is told which running allocations it may preempt: one that is
// already stopping (here killed by its user) is not asked to checkpoint as
// well, and the waiting one says what it waits for.
TEST_F(ControllerSchedulingTest, AnAllocationAlreadyStoppingIsNotPreempted) {
  auto agent = Connect("agent-1", 1);
  const auto low_id = CreateFrom(Config("low", 50));
  auto low = agent->Of<proto::Start>().at(0);
  controller_.OnAgentMessage("agent-1",
                             proto::StateChange{"1.0", 0, proto::ProcessState::kRunning, {}, {}, ""}, now_);
  ASSERT_TRUE(controller_.Kill(low_id).ok());
  ASSERT_EQ(agent->Of<proto::Kill>().size(), 1u);

  CreateFrom(Config("high", 10));
  EXPECT_FALSE(controller_.PreemptionRequested("1.0", low.allocation_token).value());
  auto jobs = controller_.JobsJson();
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_FALSE(jobs[0]["preempting"]);
  EXPECT_EQ(jobs[1]["state"], "PENDING");

  Exit("1.0", 137);  // the kill lands; the slot goes to the waiting one
  ASSERT_EQ(agent->Of<proto::Start>().size(), 2u);
  EXPECT_EQ(agent->Of<proto::Start>()[1].allocation_id, "2.0");
}

TEST_F(ControllerSchedulingTest, JobsListPendingOnesInSchedulingOrder) {
  Connect("agent-1", 1);
  CreateFrom(Config("running", 42));
  CreateFrom(Config("later", 60));
  CreateFrom(Config("urgent", 20));  // preempts "running", then waits for it
  CreateFrom(Config("soon", 30));
  auto jobs = controller_.JobsJson();
  ASSERT_EQ(jobs.size(), 4u);
  std::vector<std::string> ids;
  for (const auto& j : jobs) ids.push_back(j["allocation_id"]);
  EXPECT_EQ(ids, (std::vector<std::string>{"1.0", "3.0", "4.0", "2.0"}));
  EXPECT_TRUE(jobs[0]["position"].is_null());
  EXPECT_EQ(jobs[1]["position"], 1);
  EXPECT_EQ(jobs[3]["position"], 3);
  EXPECT_EQ(jobs[1]["pending_reason"], "waiting for preempted allocation 1.0 to stop");
  EXPECT_EQ(jobs[2]["pending_reason"], "needs 1 slot on one agent; largest free block in pool default is 0");
}

// resources.is_single_node reaches the scheduler: a single-node trial waits
// for the one agent large enough while the same size without it spreads over
// two idle smaller agents.
TEST_F(ControllerSchedulingTest, SingleNodeTrialWaitsForOneAgent) {
  auto big = Connect("agent-1", 4);
  CreateFrom(Config("busy", 42));  // one of agent-1's slots
  ASSERT_EQ(big->Of<proto::Start>().size(), 1u);
  auto small1 = Connect("agent-2", 2);
  auto small2 = Connect("agent-3", 2);
  auto sized = [](const std::string& name, bool single_node) {
    return Config(name, 42) + "  slots_per_trial: 4\n" + (single_node ? "  is_single_node: true\n" : "");
  };
  CreateFrom(sized("one-node", true));
  auto jobs = controller_.JobsJson();
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[1]["allocation_id"], "2.0");
  EXPECT_EQ(jobs[1]["state"], "PENDING");
  EXPECT_EQ(jobs[1]["pending_reason"],
            "needs 4 slots on one agent (resources.is_single_node); largest free block in pool default is 3");
  EXPECT_TRUE(small1->Of<proto::Start>().empty());
  EXPECT_TRUE(small2->Of<proto::Start>().empty());

  CreateFrom(sized("spread", false));  // behind the held agent-1, but whole agents are free
  ASSERT_EQ(small1->Of<proto::Start>().size(), 2u);
  EXPECT_EQ(small1->Of<proto::Start>()[0].allocation_id, "3.0");
  ASSERT_EQ(small2->Of<proto::Start>().size(), 2u);

  Exit("1.0", 0);  // agent-1 is free: the single-node trial takes all of it
  auto starts = big->Of<proto::Start>();
  ASSERT_EQ(starts.size(), 5u);
  for (size_t i = 1; i < starts.size(); ++i) {
    EXPECT_EQ(starts[i].allocation_id, "2.0");
    EXPECT_EQ(starts[i].world_size, 4);
  }
}

TEST_F(ControllerSchedulingTest, DisablingAnAgentPreemptsItsWorkUnlessDraining) {
  auto agent = Connect("agent-1", 2);
  CreateFrom(Config("a", 42));
  auto a = agent->Of<proto::Start>().at(0);
  ASSERT_TRUE(controller_.DisableAgent("agent-1", /*drain=*/true).ok());
  EXPECT_FALSE(controller_.PreemptionRequested("1.0", a.allocation_token).value());
  CreateFrom(Config("b", 42));
  EXPECT_EQ(agent->Of<proto::Start>().size(), 1u);  // nothing new on a disabled agent
  ASSERT_TRUE(controller_.DisableAgent("agent-1", /*drain=*/false).ok());
  EXPECT_TRUE(controller_.PreemptionRequested("1.0", a.allocation_token).value());
  ASSERT_TRUE(controller_.EnableAgent("agent-1").ok());
  EXPECT_EQ(agent->Of<proto::Start>().size(), 2u);
  EXPECT_EQ(controller_.DisableAgent("nope", false).code(), ErrorCode::kNotFound);
}

}  // namespace
}  // namespace ring
