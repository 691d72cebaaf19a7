// Trials and tasks: a trial needs its experiment and is a task, and tasks of other kinds hold allocations
// without a trial. Both Store implementations.
#include <gtest/gtest.h>

#include "tests/unit/store/store_holders.h"

namespace ring {
namespace {

using testing::LooksLikeRfc3339;

template <typename Holder>
class StoreTasksTest : public ::testing::Test {
 protected:
  int64_t NewExperiment() { return testing::NewExperiment(*store_); }
  int64_t NewTrial(int64_t experiment_id) { return testing::NewTrial(*store_, experiment_id); }
  Holder holder_;
  std::unique_ptr<Store>& store_ = holder_.store;
};

TYPED_TEST_SUITE(StoreTasksTest, testing::BothStores);

TYPED_TEST(StoreTasksTest, TrialOfUnknownExperimentIsRejected) {
  TrialRecord t;
  t.experiment_id = 77;
  EXPECT_EQ(this->store_->CreateTrial(t).status().code(), ErrorCode::kInvalidArgument);
}

TYPED_TEST(StoreTasksTest, EveryTrialIsATaskOwnedByItsExperimentsOwner) {
  const int64_t exp = this->NewExperiment();
  const int64_t t1 = this->NewTrial(exp);
  const int64_t t2 = this->NewTrial(exp);
  auto trial = this->store_->GetTrial(t1);
  ASSERT_TRUE(trial.ok());
  ASSERT_GT(trial->task_id, 0);
  EXPECT_NE(trial->task_id, this->store_->GetTrial(t2)->task_id);
  auto task = this->store_->GetTask(trial->task_id);
  ASSERT_TRUE(task.ok()) << task.status().ToString();
  EXPECT_EQ(task->kind, TaskKind::kTrial);
  EXPECT_EQ(task->owner, "alice");
  EXPECT_TRUE(LooksLikeRfc3339(task->created_at));
  EXPECT_EQ(task->ended_at, "");

  // A trial's task ends with the trial.
  TrialRecord done = *trial;
  done.state = RunState::kCompleted;
  ASSERT_TRUE(this->store_->UpdateTrial(done).ok());
  EXPECT_EQ(this->store_->GetTask(trial->task_id)->ended_at, this->store_->GetTrial(t1)->ended_at);
  EXPECT_TRUE(LooksLikeRfc3339(this->store_->GetTask(trial->task_id)->ended_at));
  // Its task is not another kind's to make.
  TaskRecord fake;
  fake.kind = TaskKind::kTrial;
  EXPECT_EQ(this->store_->CreateTask(fake, "").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(this->store_->GetTask(9999).status().code(), ErrorCode::kNotFound);
}

// A task that is not a trial needs no experiment and no trial row: its
// allocations name the task alone.
TYPED_TEST(StoreTasksTest, ATaskOfAnotherKindHasAllocationsWithoutATrial) {
  const int64_t trial = this->NewTrial(this->NewExperiment());
  TaskRecord command;
  command.kind = TaskKind::kCommand;
  command.owner = "bob";
  auto id = this->store_->CreateTask(command, "");
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_NE(*id, this->store_->GetTrial(trial)->task_id);
  auto got = this->store_->GetTask(*id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->kind, TaskKind::kCommand);
  EXPECT_EQ(got->owner, "bob");
  EXPECT_EQ(got->ended_at, "");

  AllocationRecord a;
  a.id = "cmd.0";
  a.task_id = *id;
  a.slots = 0;
  ASSERT_TRUE(this->store_->CreateAllocation(a).ok());
  auto stored = this->store_->GetAllocation("cmd.0");
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->task_id, *id);
  EXPECT_FALSE(stored->trial_id.has_value());
  auto listed = this->store_->ListTaskAllocations(*id);
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ(listed->front().id, "cmd.0");
  EXPECT_EQ(this->store_->ListTaskAllocations(this->store_->GetTrial(trial)->task_id)->size(), 0u);

  // The trial named must be the task's own: none for a command, its own for a trial's task.
  AllocationRecord wrong = a;
  wrong.id = "cmd.1";
  wrong.trial_id = trial;
  EXPECT_EQ(this->store_->CreateAllocation(wrong).code(), ErrorCode::kInvalidArgument);
  AllocationRecord untied;  // the trial's task, without its trial
  untied.id = "t.0";
  untied.task_id = this->store_->GetTrial(trial)->task_id;
  EXPECT_EQ(this->store_->CreateAllocation(untied).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(this->store_->GetAllocation("cmd.1").status().code(), ErrorCode::kNotFound);

  ASSERT_TRUE(this->store_->EndTask(*id).ok());
  const std::string ended = this->store_->GetTask(*id)->ended_at;
  EXPECT_TRUE(LooksLikeRfc3339(ended));
  ASSERT_TRUE(this->store_->EndTask(*id).ok());  // once: a second end keeps the first time
  EXPECT_EQ(this->store_->GetTask(*id)->ended_at, ended);
  EXPECT_EQ(this->store_->EndTask(9999).code(), ErrorCode::kNotFound);
}

// A command's spec, context and log lines are kept with it.
TYPED_TEST(StoreTasksTest, ATaskKeepsItsSpecContextAndLogs) {
  TaskRecord command;
  command.kind = TaskKind::kCommand;
  command.owner = "ada";
  command.spec.argv = {"python3", "-c", "print('hi')"};
  command.spec.slots = 0;
  command.spec.priority = 7;
  command.spec.preemptible = true;
  command.spec.environment.variables["A"] = "1";
  command.spec.idle_timeout_s = 60;
  auto id = this->store_->CreateTask(command, std::string("tar\0gz", 6));
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  auto plain = this->store_->CreateTask(command, "");
  ASSERT_TRUE(plain.ok());
  auto got = this->store_->GetTask(*id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->spec.argv, command.spec.argv);
  EXPECT_EQ(got->spec.slots, 0);
  EXPECT_EQ(got->spec.priority, 7);
  EXPECT_TRUE(got->spec.preemptible);
  EXPECT_EQ(got->spec.environment.variables.at("A"), "1");
  EXPECT_EQ(got->spec.idle_timeout_s, 60);
  EXPECT_EQ(*this->store_->GetTaskContext(*id), std::string("tar\0gz", 6));
  EXPECT_EQ(*this->store_->GetTaskContext(*plain), "");
  EXPECT_EQ(this->store_->GetTaskContext(9999).status().code(), ErrorCode::kNotFound);
  auto listed = this->store_->ListTasks(TaskKind::kCommand, 10);
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ(listed->front().id, *plain);  // newest first
  EXPECT_TRUE(this->store_->ListTasks(TaskKind::kShell, 10)->empty());

  std::vector<LogRecord> lines;
  for (int i = 0; i < 3; ++i)
    lines.push_back({0, 0, "command-1.0", 0, "stdout", "line " + std::to_string(i), i, *id});
  ASSERT_TRUE(this->store_->AddTaskLogs(lines).ok());
  auto logs = this->store_->GetTaskLogs(*id, -1, 0, 10);
  ASSERT_TRUE(logs.ok());
  ASSERT_EQ(logs->size(), 3u);
  EXPECT_EQ((*logs)[2].line, "line 2");
  EXPECT_EQ(this->store_->GetTaskLogs(*id, -1, (*logs)[0].id, 10)->size(), 2u);
  EXPECT_TRUE(this->store_->GetTaskLogs(*plain, -1, 0, 10)->empty());
  LogRecord orphan = lines[0];
  orphan.task_id = 9999;
  EXPECT_FALSE(this->store_->AddTaskLogs({orphan}).ok());
  EXPECT_TRUE(this->store_->ListEndedTasksWithLogs("9999")->empty());  // not ended
  ASSERT_TRUE(this->store_->EndTask(*id).ok());
  EXPECT_EQ(*this->store_->ListEndedTasksWithLogs("9999"), std::vector<int64_t>{*id});
  EXPECT_EQ(*this->store_->DeleteTaskLogs(*id), 3);
  EXPECT_TRUE(this->store_->ListEndedTasksWithLogs("9999")->empty());
}

}  // namespace
}  // namespace ring
