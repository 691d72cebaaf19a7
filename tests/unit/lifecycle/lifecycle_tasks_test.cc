// Tasks that are not trials through the lifecycle, on the test's thread: a
// command launches as one process with its argv, ends with its exit code
// and is never restarted; a non-preemptible command is never a victim and
// a preemptible one is stopped (PREEMPTED) for higher-priority work;
// recovery reattaches its allocation; zero-slot commands need a pool that
// allows them; a command's token makes no trial call; in a fair_share pool
// a command is a group of its own with its own weight beside experiments.
#include <gtest/gtest.h>

#include "tests/unit/lifecycle/lifecycle_test_fixture.h"

namespace ring {
namespace {

using namespace std::chrono_literals;

class LifecycleTasksTest : public testing::LifecycleFixture {
 protected:
  Result<TaskRecord> Run(TaskSpec spec, const std::string& owner = "bob") {
    return controller_.lifecycle().Run([&](Lifecycle& l) {
      return l.tasks().Create(TaskKind::kCommand, TaskOwner{owner, false}, std::move(spec), "");
    });
  }
  static TaskSpec Spec(std::vector<std::string> argv, int64_t priority = 42, bool preemptible = false) {
    TaskSpec s;
    s.argv = std::move(argv);
    s.priority = priority;
    s.preemptible = preemptible;
    return s;
  }
  void Exit(const std::string& allocation, int code) {
    controller_.OnAgentMessage(
        "agent-1", proto::StateChange{allocation, 0, proto::ProcessState::kExited, code, std::nullopt, ""},
        now_);
  }
  void Running(const std::string& allocation) {
    controller_.OnAgentMessage(
        "agent-1", proto::StateChange{allocation, 0, proto::ProcessState::kRunning, {}, {}, ""}, now_);
  }
};

std::string TrialConfig(int priority) {
  return "name: urgent\nentrypoint: ./run.sh\nsearcher:\n  name: single\n  metric: loss\n  max_length:\n"
         "    batches: 10\nresources:\n  priority: " +
         std::to_string(priority) + "\n";
}

TEST_F(LifecycleTasksTest, ACommandRunsItsArgvOnceAndEndsWithItsExitCode) {
  auto agent = Connect("agent-1", 2);
  auto task = Run(Spec({"python3", "-c", "print(1)"}));
  ASSERT_TRUE(task.ok()) << task.status().ToString();
  auto starts = agent->Of<proto::Start>();
  ASSERT_EQ(starts.size(), 1u);
  const proto::Start& s = starts[0];
  const std::string id = "command-" + std::to_string(task->id) + ".0";
  EXPECT_EQ(s.allocation_id, id);
  EXPECT_EQ(s.task_kind, TaskKind::kCommand);
  EXPECT_EQ(s.task_id, task->id);
  EXPECT_EQ(s.trial_id, 0);
  EXPECT_EQ(s.entrypoint_argv, (std::vector<std::string>{"python3", "-c", "print(1)"}));
  EXPECT_TRUE(s.per_node);  // one process with all its slots
  EXPECT_EQ(s.owner, "bob");
  EXPECT_TRUE(s.model_definition_path.empty());  // no context sent
  EXPECT_EQ(store_.GetTask(task->id)->spec.argv.front(), "python3");

  Running(id);
  Exit(id, 3);
  auto alloc = store_.GetAllocation(id);
  ASSERT_TRUE(alloc.ok());
  EXPECT_EQ(alloc->state, AllocationState::kTerminated);
  EXPECT_EQ(alloc->end_cause, EndCause::kFailed);
  EXPECT_EQ(alloc->exit_code, 3);
  EXPECT_FALSE(store_.GetTask(task->id)->ended_at.empty());
  EXPECT_EQ(store_.ListTaskAllocations(task->id)->size(), 1u);  // never restarted
  EXPECT_EQ(agent->Of<proto::Start>().size(), 1u);
}

TEST_F(LifecycleTasksTest, OnlyAPreemptibleCommandIsAVictim) {
  auto agent = Connect("agent-1", 1);
  auto steady = Run(Spec({"sleep", "100"}, 50, false));
  ASSERT_TRUE(steady.ok());
  const std::string steady_id = "command-" + std::to_string(steady->id) + ".0";
  Running(steady_id);
  CreateFrom(TrialConfig(1));
  EXPECT_TRUE(agent->Of<proto::Kill>().empty()) << "a non-preemptible command was asked to stop";
  auto jobs = controller_.JobsJson();
  ASSERT_EQ(jobs.size(), 2u) << jobs.dump();
  EXPECT_EQ(jobs[0]["kind"], "COMMAND");
  EXPECT_EQ(jobs[0]["owner"], "bob");
  EXPECT_EQ(jobs[1]["kind"], "TRIAL");
  EXPECT_TRUE(jobs[1]["pending_reason"].is_string());

  // Killed by its owner, it gives the slot to the trial.
  ASSERT_TRUE(controller_.lifecycle().Run([&](Lifecycle& l) { return l.tasks().Kill(steady->id); }).ok());
  ASSERT_EQ(agent->Of<proto::Kill>().size(), 1u);
  Exit(steady_id, 143);
  EXPECT_EQ(store_.GetAllocation(steady_id)->end_cause, EndCause::kUserKill);
  ASSERT_EQ(agent->Of<proto::Start>().size(), 2u);
  EXPECT_EQ(agent->Of<proto::Start>()[1].allocation_id, "1.0");
  Exit("1.0", 0);

  auto yielding = Run(Spec({"sleep", "100"}, 50, true));
  ASSERT_TRUE(yielding.ok());
  const std::string yielding_id = "command-" + std::to_string(yielding->id) + ".0";
  Running(yielding_id);
  const size_t kills = agent->Of<proto::Kill>().size();
  CreateFrom(TrialConfig(1));
  ASSERT_EQ(agent->Of<proto::Kill>().size(), kills + 1) << "the preemptible command was not stopped";
  EXPECT_EQ(agent->Of<proto::Kill>().back().allocation_id, yielding_id);
  Exit(yielding_id, 143);
  auto ended = store_.GetAllocation(yielding_id);
  EXPECT_EQ(ended->end_cause, EndCause::kPreempted);
  EXPECT_EQ(store_.ListTaskAllocations(yielding->id)->size(), 1u);  // not restarted
  EXPECT_EQ(agent->Of<proto::Start>().back().allocation_id, "2.0");
}

TEST_F(LifecycleTasksTest, RecoveryReattachesARunningCommand) {
  auto agent = Connect("agent-1", 1);
  auto task = Run(Spec({"sleep", "100"}));
  ASSERT_TRUE(task.ok());
  const std::string id = "command-" + std::to_string(task->id) + ".0";
  Running(id);
  // A new master on the same store: the command's allocation is adopted,
  // not ended, and the agent that still runs it reports its exit.
  testing::LifecycleDriver restarted(store_, options_);
  ASSERT_TRUE(restarted.Recover(now_).ok());
  EXPECT_EQ(store_.GetAllocation(id)->state, AllocationState::kRunning);
  auto channel = std::make_shared<testing::RecordingChannel>();
  proto::Hello hello{"agent-1", "default", "10.0.0.1", "test", {{0, "cpu", ""}}, {{id, 0, 42}}};
  restarted.OnAgentHello(hello, channel, now_);
  restarted.OnAgentMessage("agent-1", proto::StateChange{id, 0, proto::ProcessState::kExited, 0, {}, ""},
                           now_);
  auto alloc = store_.GetAllocation(id);
  EXPECT_EQ(alloc->end_cause, EndCause::kCompleted);
  EXPECT_EQ(alloc->exit_code, 0);
  EXPECT_FALSE(store_.GetTask(task->id)->ended_at.empty());
}

TEST_F(LifecycleTasksTest, ALostAgentEndsItsCommandWithoutARestart) {
  auto channel = Connect("agent-1", 1);
  auto task = Run(Spec({"sleep", "100"}));
  ASSERT_TRUE(task.ok());
  const std::string id = "command-" + std::to_string(task->id) + ".0";
  Running(id);
  controller_.OnAgentDisconnected("agent-1", channel.get(), now_);
  controller_.Tick(now_ + 1s);
  EXPECT_EQ(store_.GetAllocation(id)->state, AllocationState::kRunning);  // within the reconnect window
  controller_.Tick(now_ + 3s);
  auto alloc = store_.GetAllocation(id);
  EXPECT_EQ(alloc->state, AllocationState::kTerminated);
  EXPECT_EQ(alloc->end_cause, EndCause::kAgentLost);
  EXPECT_FALSE(store_.GetTask(task->id)->ended_at.empty());
  // A trial would move; a command cannot resume, so it is not queued again.
  EXPECT_EQ(store_.ListTaskAllocations(task->id)->size(), 1u);
  auto other = Connect("agent-2", 1);
  EXPECT_TRUE(other->Of<proto::Start>().empty());
}

TEST_F(LifecycleTasksTest, ZeroSlotsNeedAPoolThatAllowsThem) {
  auto agent = Connect("agent-1", 1);
  TaskSpec none = Spec({"true"});
  none.slots = 0;
  auto refused = Run(none);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("zero_slot_tasks"), std::string::npos);
  EXPECT_TRUE(store_.ListTasks(TaskKind::kCommand, 10)->empty());  // nothing written
}

TEST(LifecycleZeroSlotTasks, ACpuHelperRunsBesideATrialWithoutASlot) {
  MemoryStore store;
  testing::DriverOptions options;
  options.pools = DefaultPools();
  options.pools[0].zero_slot_tasks = true;
  testing::LifecycleDriver controller(store, options);
  auto agent = std::make_shared<testing::RecordingChannel>();
  proto::Hello hello{"agent-1", "default", "10.0.0.1", "test", {{0, "cpu", ""}}, {}};
  const auto now = std::chrono::steady_clock::now();
  controller.OnAgentHello(hello, agent, now);
  for (int i = 0; i < 2; ++i) {
    TaskSpec helper;
    helper.argv = {"true"};
    helper.slots = i;  // 0, then 1: the slot is still free for the second
    auto task = controller.lifecycle().Run([&](Lifecycle& l) {
      return l.tasks().Create(TaskKind::kCommand, TaskOwner{"bob", false}, helper, "");
    });
    ASSERT_TRUE(task.ok()) << task.status().ToString();
  }
  auto starts = agent->Of<proto::Start>();
  ASSERT_EQ(starts.size(), 2u);
  EXPECT_TRUE(starts[0].slot_ids.empty());
  EXPECT_EQ(starts[1].slot_ids, std::vector<int>{0});
}

TEST_F(LifecycleTasksTest, ACommandsTokenMakesNoTrialCall) {
  auto agent = Connect("agent-1", 1);
  auto task = Run(Spec({"sleep", "1"}));
  ASSERT_TRUE(task.ok());
  const auto start = agent->Of<proto::Start>().at(0);
  auto prepared = controller_.PrepareCheckpoint(start.allocation_id, start.allocation_token);
  ASSERT_FALSE(prepared.ok());
  EXPECT_EQ(prepared.status().code(), ErrorCode::kPermissionDenied);
  auto asked = controller_.PreemptionRequested(start.allocation_id, start.allocation_token);
  EXPECT_FALSE(asked.ok());
}

// A fair_share pool of 4 slots, all held by an experiment of weight 1 (four
// one-slot trials). A 3-slot command of weight 3 is owed 3 of the 4 slots:
// three trials are stopped for it and the experiment keeps one. The same
// command of weight 1/3 is owed 1: nothing is stopped and it waits.
TEST(LifecycleTaskFairShare, ACommandAndAnExperimentSplitTheSlotsByWeight) {
  for (const double weight : {3.0, 1.0 / 3}) {
    SCOPED_TRACE("command weight " + std::to_string(weight));
    MemoryStore store;
    testing::DriverOptions options;
    options.pools = DefaultPools();
    options.pools[0].scheduler = "fair_share";
    options.pools[0].preemption = true;
    testing::LifecycleDriver controller(store, options);
    const auto now = std::chrono::steady_clock::now();
    auto agent = std::make_shared<testing::RecordingChannel>();
    proto::Hello hello{"agent-1", "default", "10.0.0.1", "test", {}, {}};
    for (int i = 0; i < 4; ++i) hello.slots.push_back({i, "cpu", ""});
    controller.OnAgentHello(hello, agent, now);
    const auto dir = std::filesystem::temp_directory_path() / ("ctl-fair-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "run.sh") << "#!/bin/sh\n";
    const std::string model = *PackDirectory(dir.string());
    std::filesystem::remove_all(dir);
    auto exp = controller.CreateExperiment(
        "name: light\nentrypoint: ./run.sh\nsearcher:\n  name: random\n  metric: loss\n  max_trials: 8\n"
        "  max_concurrent_trials: 4\n  max_length:\n    batches: 10\nhyperparameters:\n  x:\n"
        "    type: double\n    minval: 0\n    maxval: 1\nresources:\n  weight: 1\n",
        model, true, "alice");
    ASSERT_TRUE(exp.ok()) << exp.status().ToString();
    auto starts = agent->Of<proto::Start>();
    ASSERT_EQ(starts.size(), 4u);
    for (const auto& s : starts)
      controller.OnAgentMessage(
          "agent-1", proto::StateChange{s.allocation_id, 0, proto::ProcessState::kRunning, {}, {}, ""}, now);

    TaskSpec spec;
    spec.argv = {"sleep", "100"};
    spec.slots = 3;
    spec.weight = weight;
    auto task = controller.lifecycle().Run([&](Lifecycle& l) {
      return l.tasks().Create(TaskKind::kCommand, TaskOwner{"bob", false}, spec, "");
    });
    ASSERT_TRUE(task.ok()) << task.status().ToString();
    const std::string command = "command-" + std::to_string(task->id) + ".0";
    // Which trials were asked to checkpoint and stop for it.
    std::vector<proto::Start> asked;
    for (const auto& s : starts)
      if (controller.PreemptionRequested(s.allocation_id, s.allocation_token).value()) asked.push_back(s);
    if (weight < 1) {
      EXPECT_TRUE(asked.empty()) << "a command owed one slot stopped trials for three";
      EXPECT_TRUE(agent->Of<proto::Kill>().empty());
      bool waits = false;
      const auto jobs = controller.JobsJson();
      for (const auto& j : jobs)
        if (j["kind"] == "COMMAND") waits = j["state"] == "PENDING" && j["pending_reason"].is_string();
      EXPECT_TRUE(waits) << jobs.dump();
      continue;
    }
    ASSERT_EQ(asked.size(), 3u) << "the command's weight did not give it three slots";
    for (const auto& s : asked) {
      ASSERT_TRUE(controller.AcknowledgePreemption(s.allocation_id, s.allocation_token).ok());
      controller.OnAgentMessage(
          "agent-1", proto::StateChange{s.allocation_id, 0, proto::ProcessState::kExited, 0, {}, ""}, now);
    }
    starts = agent->Of<proto::Start>();
    ASSERT_EQ(starts.back().allocation_id, command);
    EXPECT_EQ(starts.back().slot_ids.size(), 3u);
    // The experiment keeps one slot and no more: its waiting trials stay
    // queued beside the running command.
    int trial_slots = 0, command_slots = 0;
    for (const auto& j : controller.JobsJson()) {
      if (j["state"] == "PENDING") continue;
      (j["kind"] == "COMMAND" ? command_slots : trial_slots) += j["slots"].get<int>();
    }
    EXPECT_EQ(command_slots, 3);
    EXPECT_EQ(trial_slots, 1);
  }
}

TEST(LifecycleTaskPools, APoolsAllowedUsersAndItsSlotsAreCheckedBeforeAnythingIsWritten) {
  MemoryStore store;
  testing::DriverOptions options;
  options.pools = DefaultPools();
  options.pools[0].allowed_users = {"ada"};
  testing::LifecycleDriver controller(store, options);
  auto agent = std::make_shared<testing::RecordingChannel>();
  controller.OnAgentHello({"agent-1", "default", "10.0.0.1", "test", {{0, "cpu", ""}, {1, "cpu", ""}}, {}},
                          agent, std::chrono::steady_clock::now());
  auto create = [&](const std::string& who, int64_t slots, const std::string& pool) {
    TaskSpec spec;
    spec.argv = {"true"};
    spec.slots = slots;
    spec.resource_pool = pool;
    return controller.lifecycle().Run([&](Lifecycle& l) {
      return l.tasks().Create(TaskKind::kCommand, TaskOwner{who, false}, spec, "");
    });
  };
  auto bob = create("bob", 1, "default");
  ASSERT_FALSE(bob.ok());
  EXPECT_EQ(bob.status().code(), ErrorCode::kPermissionDenied);
  EXPECT_NE(bob.status().message().find("resources.resource_pool"), std::string::npos);
  auto too_wide = create("ada", 3, "default");  // one process: never on two agents' slots
  ASSERT_FALSE(too_wide.ok());
  EXPECT_EQ(too_wide.status().code(), ErrorCode::kInvalidConfig);
  EXPECT_EQ(
      too_wide.status().message(),
      "resources.slots: a command of 3 slots must fit on one agent (it is one process); the largest agent "
      "in pool default has 2 slots");
  auto nowhere = create("ada", 1, "no-such-pool");
  ASSERT_FALSE(nowhere.ok());
  EXPECT_NE(nowhere.status().message().find("no-such-pool"), std::string::npos);
  auto bad_context = controller.lifecycle().Run([&](Lifecycle& l) {
    TaskSpec spec;
    spec.argv = {"true"};
    return l.tasks().Create(TaskKind::kCommand, TaskOwner{"ada", false}, spec, "not a tar.gz");
  });
  ASSERT_FALSE(bad_context.ok());
  EXPECT_NE(bad_context.status().message().find("context"), std::string::npos);
  EXPECT_TRUE(store.ListTasks(TaskKind::kCommand, 10)->empty());  // nothing written
  EXPECT_TRUE(create("ada", 2, "default").ok());
}

}  // namespace
}  // namespace ring
