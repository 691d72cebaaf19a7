// The lifecycle core with the in-memory store and recording agent channels:
// every transition of an allocation and what it means for trial and experiment.
#include "tests/support/lifecycle_driver.h"

#include <gtest/gtest.h>

#include <set>

#include "master/auth/tokens.h"
#include "tests/unit/lifecycle/lifecycle_test_fixture.h"

namespace ring {
namespace {

using testing::RecordingChannel;

using namespace std::chrono_literals;

std::string QuadConfig(int max_restarts) {
  return "name: quad\nentrypoint: ./run.sh\nhyperparameters:\n  lr: 0.5\nsearcher:\n  name: single\n"
         "  metric: validation_loss\n  max_length:\n    batches: 200\nmax_restarts: " +
         std::to_string(max_restarts) + "\nenvironment:\n  variables:\n    FOO: bar\n";
}

class LifecycleTest : public testing::LifecycleFixture {
 protected:
  int64_t Create(int max_restarts) { return CreateFrom(QuadConfig(max_restarts)); }
};

TEST_F(LifecycleTest, SingleTrialRunsToCompletion) {
  const int64_t exp_id = Create(0);
  EXPECT_EQ(store_.GetExperiment(exp_id)->state, RunState::kActive);
  EXPECT_EQ((*store_.ListAllocations(1))[0].state, AllocationState::kPending);

  auto channel = Connect("agent-1", 2);
  auto welcome = channel->Of<proto::Welcome>();
  ASSERT_EQ(welcome.size(), 1u);
  auto starts = channel->Of<proto::Start>();
  ASSERT_EQ(starts.size(), 1u);
  const auto& start = starts[0];
  EXPECT_EQ(start.allocation_id, "1.0");
  EXPECT_EQ(start.entrypoint, "./run.sh");
  EXPECT_EQ(start.world_size, 1);
  EXPECT_EQ(start.master_addr, "10.0.0.1");
  EXPECT_EQ(start.environment.at("FOO"), "bar");
  EXPECT_EQ(start.environment.at("RING_MAX_LENGTH_BATCHES"), "200");
  EXPECT_EQ(nlohmann::json::parse(start.hparams_json)["lr"], 0.5);
  EXPECT_EQ(store_.GetAllocation("1.0")->state, AllocationState::kAssigned);
  EXPECT_EQ(controller_.ModelDefinition("1.0", start.allocation_token).value(), model_);

  Report("agent-1", "1.0", proto::ProcessState::kStarting);
  Report("agent-1", "1.0", proto::ProcessState::kRunning);
  EXPECT_EQ(store_.GetAllocation("1.0")->state, AllocationState::kRunning);

  nlohmann::json body = {
      {"reports",
       {{{"kind", "training"}, {"batches", 200}, {"metrics", {{"loss", 0.3}}}},
        {{"kind", "validation"}, {"batches", 200}, {"metrics", {{"validation_loss", 0.25}}}}}}};
  EXPECT_EQ(controller_.ReportMetrics("1.0", start.allocation_token, body).value(), 2);
  EXPECT_EQ(controller_.ReportMetrics("1.0", start.allocation_token, body).value(), 0);  // a retry
  EXPECT_EQ(controller_.ReportMetrics("1.0", "wrong", body).status().code(), ErrorCode::kUnauthenticated);
  // A misspelt field is refused, naming it, and stores nothing.
  nlohmann::json typo = {
      {"reports", {{{"kind", "training"}, {"batches", 300}, {"metric", {{"loss", 0.1}}}}}}};
  auto refused = controller_.ReportMetrics("1.0", start.allocation_token, typo);
  EXPECT_EQ(refused.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("unknown field \"metric\" in reports[0]"), std::string::npos)
      << refused.status().ToString();
  typo = {{"reports", nlohmann::json::array()}, {"sequence", 1}};
  EXPECT_EQ(controller_.ReportMetrics("1.0", start.allocation_token, typo).status().code(),
            ErrorCode::kInvalidArgument);
  auto trial = store_.GetTrial(1);
  EXPECT_EQ(trial->total_batches, 200);
  EXPECT_EQ(trial->best_validation, 0.25);
  EXPECT_EQ(store_.GetExperiment(exp_id)->best_trial_id, 1);
  // All batches trained; the search is done only when the trial has ended.
  EXPECT_GT(store_.GetExperiment(exp_id)->progress, 0.9);
  EXPECT_LT(store_.GetExperiment(exp_id)->progress, 1.0);

  Report("agent-1", "1.0", proto::ProcessState::kExited, 0);
  EXPECT_DOUBLE_EQ(store_.GetExperiment(exp_id)->progress, 1.0);
  auto alloc = store_.GetAllocation("1.0");
  EXPECT_EQ(alloc->state, AllocationState::kTerminated);
  EXPECT_EQ(alloc->exit_reason, "exited with code 0");
  EXPECT_EQ(alloc->end_cause, EndCause::kCompleted);
  EXPECT_EQ(store_.GetTrial(1)->state, RunState::kCompleted);
  EXPECT_EQ(store_.GetExperiment(exp_id)->state, RunState::kCompleted);
  EXPECT_FALSE(store_.GetExperiment(exp_id)->ended_at.empty());
  // The ended allocation's token no longer works.
  EXPECT_EQ(controller_.ReportMetrics("1.0", start.allocation_token, body).status().code(),
            ErrorCode::kConflict);
}

TEST_F(LifecycleTest, FailedTrialRestartsUntilMaxRestartsThenErrors) {
  const int64_t exp_id = Create(1);
  auto channel = Connect("agent-1", 1);
  Report("agent-1", "1.0", proto::ProcessState::kExited, 3);
  EXPECT_EQ(store_.GetAllocation("1.0")->exit_reason, "rank 0 exited with code 3");
  EXPECT_EQ(store_.GetAllocation("1.0")->end_cause, EndCause::kFailed);
  EXPECT_EQ(store_.GetTrial(1)->restarts, 1);
  EXPECT_EQ(store_.GetTrial(1)->state, RunState::kActive);
  ASSERT_EQ(channel->Of<proto::Start>().size(), 2u);
  EXPECT_EQ(channel->Of<proto::Start>()[1].allocation_id, "1.1");
  Report("agent-1", "1.1", proto::ProcessState::kExited, std::nullopt, 9);
  EXPECT_EQ(store_.GetAllocation("1.1")->exit_reason, "rank 0 killed by signal 9");
  EXPECT_EQ(store_.GetTrial(1)->state, RunState::kError);
  EXPECT_EQ(store_.GetExperiment(exp_id)->state, RunState::kError);
}

TEST_F(LifecycleTest, LostAgentsTrialMovesWithoutCountingARestart) {
  Create(0);
  auto channel = Connect("agent-1", 1);
  Report("agent-1", "1.0", proto::ProcessState::kRunning);
  controller_.OnAgentDisconnected("agent-1", channel.get(), now_);
  controller_.Tick(now_ + 1s);
  EXPECT_EQ(store_.GetAllocation("1.0")->state, AllocationState::kRunning);  // within the reconnect window
  EXPECT_EQ(controller_.AgentsJson()[0]["state"], "disconnected");
  controller_.Tick(now_ + 3s);
  auto alloc = store_.GetAllocation("1.0");
  EXPECT_EQ(alloc->state, AllocationState::kTerminated);
  EXPECT_EQ(alloc->exit_reason, "agent lost");
  EXPECT_EQ(alloc->end_cause, EndCause::kAgentLost);
  EXPECT_EQ(controller_.AgentsJson()[0]["state"], "lost");
  // An infrastructure failure: requeued although max_restarts is 0.
  EXPECT_EQ(store_.GetTrial(1)->state, RunState::kActive);
  EXPECT_EQ(store_.GetTrial(1)->restarts, 0);
  EXPECT_EQ(store_.GetAllocation("1.1")->state, AllocationState::kPending);
  auto other = Connect("agent-2", 1);
  ASSERT_EQ(other->Of<proto::Start>().size(), 1u);
  EXPECT_EQ(other->Of<proto::Start>()[0].allocation_id, "1.1");

  // The lost agent comes back still running the old process: it is told to kill it.
  now_ += 5s;
  auto back = std::make_shared<RecordingChannel>();
  controller_.OnAgentHello({"agent-1", "default", "10.0.0.1", "test", {{0, "cpu", ""}}, {{"1.0", 0, 4242}}},
                           back, now_);
  ASSERT_EQ(back->Of<proto::Kill>().size(), 1u);
  EXPECT_EQ(back->Of<proto::Kill>()[0].allocation_id, "1.0");
  // Its late reports are fenced out.
  nlohmann::json body = {{"reports", {{{"kind", "training"}, {"batches", 1}, {"metrics", {{"loss", 1}}}}}}};
  const auto old_token = channel->Of<proto::Start>()[0].allocation_token;
  EXPECT_EQ(controller_.ReportMetrics("1.0", old_token, body).status().code(), ErrorCode::kConflict);
}

TEST_F(LifecycleTest, SilentConnectedAgentIsDisconnectedThenLost) {
  Create(0);
  auto channel = Connect("agent-1", 1);
  controller_.Tick(now_ + 3s + 100ms);  // past the heartbeat deadline
  EXPECT_EQ(channel->closed, "heartbeat timeout");
  EXPECT_EQ(controller_.AgentsJson()[0]["state"], "disconnected");
  controller_.Tick(now_ + 4s);
  EXPECT_EQ(controller_.AgentsJson()[0]["state"], "disconnected");
  controller_.Tick(now_ + 5s + 200ms);  // and past the reconnect window
  EXPECT_EQ(controller_.AgentsJson()[0]["state"], "lost");
  EXPECT_EQ(store_.GetAllocation("1.0")->exit_reason, "agent lost");
}

TEST_F(LifecycleTest, AgentThatReturnsWithoutTheProcessEndsItAsInfrastructure) {
  Create(0);
  auto channel = Connect("agent-1", 1);
  Report("agent-1", "1.0", proto::ProcessState::kRunning);
  controller_.OnAgentDisconnected("agent-1", channel.get(), now_);
  Connect("agent-1", 1);  // back within the window, but it runs nothing (it restarted)
  controller_.Tick(now_ + 4s);
  EXPECT_EQ(store_.GetAllocation("1.0")->exit_reason, "agent restarted: the process is gone");
  EXPECT_EQ(store_.GetAllocation("1.0")->end_cause, EndCause::kAgentRestarted);
  EXPECT_EQ(store_.GetTrial(1)->restarts, 0);
}

TEST_F(LifecycleTest, CheckpointsAreRegisteredOnceAndRestartsResumeFromTheLatest) {
  Create(2);
  auto channel = Connect("agent-1", 1);
  const auto start = channel->Of<proto::Start>()[0];
  const std::string root = options_.checkpoint_root;
  EXPECT_EQ(nlohmann::json::parse(start.environment.at("RING_CHECKPOINT_STORAGE"))["host_path"], root);
  EXPECT_TRUE(start.latest_checkpoint.empty());
  const std::string sha(64, 'a');
  auto ckpt = [&](const std::string& uuid, int batches) {
    return nlohmann::json{{"uuid", uuid},
                          {"batches", batches},
                          {"resources", {{{"path", "state.bin"}, {"size", 10}, {"sha256", sha}}}},
                          {"metadata", {{"note", "x"}}}};
  };
  // The master issues each uuid; the trial writes <root>/<uuid>/state.bin.
  auto issue = [&] {
    auto issued = controller_.PrepareCheckpoint("1.0", start.allocation_token);
    EXPECT_TRUE(issued.ok()) << issued.status().ToString();
    const std::string uuid = issued.ok() ? issued->uuid : "";
    std::filesystem::create_directories(root + "/" + uuid);
    std::ofstream(root + "/" + uuid + "/state.bin") << "0123456789";
    return uuid;
  };
  const std::string first = issue(), second = issue();
  EXPECT_TRUE(controller_.RegisterCheckpoint("1.0", start.allocation_token, ckpt(first, 100)).value());
  EXPECT_FALSE(controller_.RegisterCheckpoint("1.0", start.allocation_token, ckpt(first, 100)).value());
  EXPECT_TRUE(controller_.RegisterCheckpoint("1.0", start.allocation_token, ckpt(second, 200)).value());
  EXPECT_EQ(controller_.RegisterCheckpoint("1.0", start.allocation_token, ckpt(second, 300)).status().code(),
            ErrorCode::kConflict);
  auto unissued = controller_.RegisterCheckpoint("1.0", start.allocation_token, ckpt("aaaa-0005", 300));
  EXPECT_EQ(unissued.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(unissued.status().message().find("not issued"), std::string::npos) << unissued.status().message();
  auto bad = ckpt("aaaa-0003", 300);
  bad["resources"][0]["path"] = "../escape";
  EXPECT_EQ(controller_.RegisterCheckpoint("1.0", start.allocation_token, bad).status().code(),
            ErrorCode::kInvalidArgument);
  // Found by fuzzing (fuzz/fuzz_api): metadata nested deeper than the stack
  // allows crashed the master when it copied and wrote it out; an 8 MiB body
  // holds millions of levels.
  const int kLevels = 1000000;
  auto deep = nlohmann::json::parse(R"({"uuid":"aaaa-0004","batches":400,"resources":[],"metadata":{"a":)" +
                                    std::string(kLevels, '[') + std::string(kLevels, ']') + "}}");
  auto refused = controller_.RegisterCheckpoint("1.0", start.allocation_token, deep);
  EXPECT_EQ(refused.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(refused.status().message(), "metadata must not nest deeper than 64 levels");
  EXPECT_EQ(store_.GetTrial(1)->latest_checkpoint, second);
  EXPECT_EQ(controller_.TrialCheckpoint("1.0", start.allocation_token, first)->batches, 100);
  // A master stopped between storing a checkpoint and pointing its trial at
  // it: the runtime's retry finishes the job (and spends the reservation).
  const std::string third = issue();
  CheckpointRecord stored;
  stored.uuid = third;
  stored.trial_id = 1;
  stored.allocation_id = "1.0";
  stored.batches = 250;
  stored.storage = store_.GetCheckpointReservation(third)->storage;
  stored.resources = {{"state.bin", 10, sha}};
  ASSERT_TRUE(store_.AddCheckpoint(stored).ok());
  EXPECT_EQ(store_.GetTrial(1)->latest_checkpoint, second);
  EXPECT_FALSE(controller_.RegisterCheckpoint("1.0", start.allocation_token, ckpt(third, 250)).value());
  EXPECT_EQ(store_.GetTrial(1)->latest_checkpoint, third);
  EXPECT_EQ(store_.GetCheckpointReservation(third).status().code(), ErrorCode::kNotFound);

  Report("agent-1", "1.0", proto::ProcessState::kExited, std::nullopt, 9);  // killed: a user failure
  EXPECT_EQ(store_.GetTrial(1)->restarts, 1);
  auto restarted = channel->Of<proto::Start>();
  ASSERT_EQ(restarted.size(), 2u);
  EXPECT_EQ(restarted[1].latest_checkpoint, root + "/" + third);
  std::filesystem::remove_all(root);
}

TEST_F(LifecycleTest, PauseAsksTrialsToCheckpointAndActivateResumes) {
  const int64_t exp_id = Create(0);
  auto channel = Connect("agent-1", 1);
  const auto token = channel->Of<proto::Start>()[0].allocation_token;
  Report("agent-1", "1.0", proto::ProcessState::kRunning);
  EXPECT_FALSE(controller_.PreemptionRequested("1.0", token).value());
  EXPECT_EQ(controller_.AcknowledgePreemption("1.0", token).code(), ErrorCode::kConflict);
  ASSERT_TRUE(controller_.Pause(exp_id).ok());
  EXPECT_TRUE(controller_.PreemptionRequested("1.0", token).value());
  EXPECT_TRUE(channel->Of<proto::Kill>().empty());  // asked, not killed
  ASSERT_TRUE(controller_.AcknowledgePreemption("1.0", token).ok());
  Report("agent-1", "1.0", proto::ProcessState::kExited, 0);
  EXPECT_EQ(store_.GetTrial(1)->state, RunState::kPaused);
  EXPECT_EQ(store_.GetTrial(1)->restarts, 0);
  EXPECT_EQ(store_.GetExperiment(exp_id)->state, RunState::kPaused);
  ASSERT_TRUE(controller_.Activate(exp_id).ok());
  EXPECT_EQ(store_.GetTrial(1)->state, RunState::kActive);
  ASSERT_EQ(channel->Of<proto::Start>().size(), 2u);
  EXPECT_EQ(channel->Of<proto::Start>()[1].allocation_id, "1.1");
}

TEST_F(LifecycleTest, TrialThatIgnoresPreemptionIsKilledAfterTheTimeout) {
  const int64_t exp_id = Create(0);
  auto channel = Connect("agent-1", 1);
  Report("agent-1", "1.0", proto::ProcessState::kRunning);
  ASSERT_TRUE(controller_.Pause(exp_id).ok());
  auto at = [&](std::chrono::seconds later) {  // the agent keeps sending heartbeats
    const auto t = std::chrono::steady_clock::now() + later;
    controller_.OnAgentMessage("agent-1", proto::Heartbeat{}, t);
    controller_.Tick(t);
  };
  at(3599s);
  EXPECT_TRUE(channel->Of<proto::Kill>().empty());
  at(3601s);
  ASSERT_EQ(channel->Of<proto::Kill>().size(), 1u);
  Report("agent-1", "1.0", proto::ProcessState::kExited, std::nullopt, 15);
  EXPECT_EQ(store_.GetTrial(1)->state, RunState::kPaused);
}

TEST_F(LifecycleTest, OneFailedRankEndsTheWholeGang) {
  auto config = QuadConfig(1);
  config.replace(config.find("max_restarts"), 0, "resources:\n  slots_per_trial: 4\n");
  ASSERT_TRUE(controller_.CreateExperiment(config, model_, true, "bob").ok());
  auto a = Connect("agent-a", 2);
  auto b = Connect("agent-b", 2);
  ASSERT_EQ(a->Of<proto::Start>().size() + b->Of<proto::Start>().size(), 4u);  // 4 ranks on 2 whole agents
  std::map<int, std::string> agent_of_rank;
  for (const auto& s : a->Of<proto::Start>()) agent_of_rank[s.rank] = "agent-a";
  for (const auto& s : b->Of<proto::Start>()) agent_of_rank[s.rank] = "agent-b";
  ASSERT_EQ(agent_of_rank.size(), 4u);
  EXPECT_EQ(agent_of_rank.begin()->first, 0);
  EXPECT_EQ(agent_of_rank.rbegin()->first, 3);
  EXPECT_EQ(a->Of<proto::Start>()[0].world_size, 4);
  controller_.OnAgentMessage(agent_of_rank[2],
                             proto::StateChange{"1.0", 2, proto::ProcessState::kExited, 1, std::nullopt, ""},
                             now_);
  // The other ranks are told to stop.
  EXPECT_EQ(a->Of<proto::Kill>().size(), 1u);
  EXPECT_EQ(b->Of<proto::Kill>().size(), 1u);
  for (int r : {0, 1, 3})
    controller_.OnAgentMessage(
        agent_of_rank[r], proto::StateChange{"1.0", r, proto::ProcessState::kExited, std::nullopt, 15, ""},
        now_);
  auto alloc = store_.GetAllocation("1.0");
  EXPECT_EQ(alloc->state, AllocationState::kTerminated);
  EXPECT_EQ(alloc->exit_reason, "rank 2 exited with code 1");
  EXPECT_EQ(store_.GetTrial(1)->restarts, 1);  // the whole allocation restarts once
  EXPECT_EQ(store_.GetAllocation("1.1")->state, AllocationState::kAssigned);
}

TEST_F(LifecycleTest, HeartbeatsKeepAnAgentAlive) {
  Create(0);
  Connect("agent-1", 1);
  now_ += 2s;
  controller_.OnAgentMessage("agent-1", proto::Heartbeat{}, now_);
  controller_.Tick(now_ + 2s);
  EXPECT_EQ(controller_.AgentsJson()[0]["state"], "connected");
  EXPECT_EQ(store_.GetAllocation("1.0")->state, AllocationState::kAssigned);
}

// A tick looks for expired deadlines only from the earliest one it knows
// of: a disconnect whose reconnect window (2 s here) ends before the
// heartbeat deadlines seen at the last tick (3 s) still loses its agent on
// time, while the heartbeating agent beside it stays connected.
TEST_F(LifecycleTest, AnAgentIsLostWhenItsReconnectWindowEndsBeforeOtherDeadlines) {
  Create(0);
  auto channel = Connect("agent-1", 1);
  Connect("agent-2", 1);
  controller_.Tick(now_ + 500ms);  // both connected; the earliest deadline is now_ + 3 s
  controller_.OnAgentDisconnected("agent-1", channel.get(), now_ + 500ms);  // lost at now_ + 2.5 s
  controller_.OnAgentMessage("agent-2", proto::Heartbeat{}, now_ + 2s);
  controller_.Tick(now_ + 2s + 600ms);
  auto agents = controller_.AgentsJson();
  ASSERT_EQ(agents.size(), 2u);
  EXPECT_EQ(agents[0]["state"], "lost") << agents.dump();
  EXPECT_EQ(agents[1]["state"], "connected") << agents.dump();
  EXPECT_EQ(store_.GetAllocation("1.0")->exit_reason, "agent lost");
}

TEST_F(LifecycleTest, LogBatchesAreStoredOnceEach) {
  Create(0);
  Connect("agent-1", 1);
  proto::LogBatch batch{"1.0", 0, 1, {{1, "stdout", "hello"}, {2, "stderr", "warn"}}};
  controller_.OnAgentMessage("agent-1", batch, now_);
  controller_.OnAgentMessage("agent-1", batch, now_);  // resent after a reconnect
  auto logs = store_.GetLogs(1, -1, 0, 100);
  ASSERT_EQ(logs->size(), 2u);
  EXPECT_EQ((*logs)[0].line, "hello");
  EXPECT_EQ((*logs)[1].stream, "stderr");
}

TEST_F(LifecycleTest, KillCancelsRunningTrial) {
  const int64_t exp_id = Create(3);
  auto channel = Connect("agent-1", 1);
  Report("agent-1", "1.0", proto::ProcessState::kRunning);
  ASSERT_TRUE(controller_.Kill(exp_id).ok());
  EXPECT_EQ(store_.GetExperiment(exp_id)->state, RunState::kStoppingCanceled);
  ASSERT_EQ(channel->Of<proto::Kill>().size(), 1u);
  Report("agent-1", "1.0", proto::ProcessState::kExited, std::nullopt, 15);
  EXPECT_EQ(store_.GetAllocation("1.0")->exit_reason, "killed by user");
  EXPECT_EQ(store_.GetTrial(1)->state, RunState::kCanceled);
  EXPECT_EQ(store_.GetExperiment(exp_id)->state, RunState::kCanceled);
}

TEST_F(LifecycleTest, RejectsBadConfigAndBadArchiveWithoutStoring) {
  auto bad = controller_.CreateExperiment("name: x\n", model_, true, "alice");
  EXPECT_EQ(bad.status().code(), ErrorCode::kInvalidConfig);
  auto bad_tar = controller_.CreateExperiment(QuadConfig(0), "garbage", true, "alice");
  EXPECT_EQ(bad_tar.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(store_.ListExperiments(10, 0)->total, 0);
}

}  // namespace
}  // namespace ring

namespace ring {
namespace {

// An experiment whose stored config no longer parses (a key a newer master
// refuses) and a queued allocation of its trial, as a restarted master
// finds them.
class UnreadableConfigTest : public testing::LifecycleFixture {
 protected:
  void SetUp() override {
    LifecycleFixture::SetUp();
    ExperimentRecord exp;
    exp.name = "old";
    exp.owner = "alice";
    exp.config_yaml = "name: old\nentrypoint: ./run.sh\nsearcher: {name: nonesuch}\n";
    exp_id_ = *store_.CreateExperiment(exp, model_);
    TrialRecord trial;
    trial.experiment_id = exp_id_;
    trial_id_ = *store_.CreateTrial(trial);
    AllocationRecord alloc;
    alloc.id = std::to_string(trial_id_) + ".0";
    alloc.task_id = store_.GetTrial(trial_id_)->task_id;
    alloc.trial_id = trial_id_;
    ASSERT_TRUE(store_.CreateAllocation(alloc).ok());
    ASSERT_TRUE(controller_.Recover(now_).ok());
  }
  int64_t exp_id_ = 0;
  int64_t trial_id_ = 0;
};

TEST_F(UnreadableConfigTest, AnAllocationThatCannotBeLaunchedEndsAndHoldsNoSlots) {
  auto channel = Connect("agent-1", 1);
  EXPECT_TRUE(channel->Of<proto::Start>().empty());
  auto alloc = store_.GetAllocation(std::to_string(trial_id_) + ".0");
  ASSERT_TRUE(alloc.ok());
  EXPECT_EQ(alloc->state, AllocationState::kTerminated);
  EXPECT_EQ(alloc->end_cause, EndCause::kFailed);
  EXPECT_EQ(alloc->exit_reason.rfind("cannot start:", 0), 0u) << alloc->exit_reason;
  const auto agents = controller_.AgentsJson();
  ASSERT_EQ(agents.size(), 1u);
  EXPECT_TRUE(agents[0]["slots"][0]["allocation_id"].is_null());  // nothing holds the slot
  EXPECT_TRUE(controller_.JobsJson().empty());
}

TEST_F(UnreadableConfigTest, ARunningTrialOfItCompletesNoOperationAndTheMasterCarriesOn) {
  // A second trial whose allocation was running on agent-1 before the restart.
  TrialRecord trial;
  trial.experiment_id = exp_id_;
  const int64_t running = *store_.CreateTrial(trial);
  AllocationRecord alloc;
  alloc.id = std::to_string(running) + ".0";
  alloc.task_id = store_.GetTrial(running)->task_id;
  alloc.trial_id = running;
  alloc.state = AllocationState::kRunning;
  alloc.token_hash = HashToken("secret");
  alloc.placements = {{"agent-1", {0}}};
  ASSERT_TRUE(store_.CreateAllocation(alloc).ok());
  testing::LifecycleDriver restarted(store_, options_);
  ASSERT_TRUE(restarted.Recover(now_).ok());
  auto accepted = restarted.CompleteSearcherOperation(alloc.id, "secret", {{"length", 10}, {"metric", 0.5}});
  ASSERT_TRUE(accepted.ok()) << accepted.status().ToString();
  EXPECT_FALSE(*accepted);
  EXPECT_EQ(restarted.CompleteSearcherOperation(alloc.id, "wrong", {{"length", 10}, {"metric", 0.5}})
                .status()
                .code(),
            ErrorCode::kUnauthenticated);
}

}  // namespace
}  // namespace ring
