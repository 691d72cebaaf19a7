// Warm start (searcher.source_trial_id / source_checkpoint_uuid) in the
// lifecycle on the in-memory store: the checks at submit, each refusal with
// its key and line; the trials starting from the source; the trial's own
// first checkpoint becoming its latest; garbage collection keeping a source
// while an experiment that starts from it runs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "master/lifecycle/warm_start.h"
#include "tests/unit/lifecycle/lifecycle_test_fixture.h"

namespace ring {
namespace {

using namespace std::chrono_literals;

std::string Config(const std::string& source_line, const std::string& storage = "") {
  return "name: warm\n"                                            // 1
         "entrypoint: ./run.sh\n"                                  // 2
         "searcher:\n"                                             // 3
         "  name: single\n"                                        // 4
         "  metric: validation_loss\n"                             // 5
         "  max_length:\n"                                         // 6
         "    batches: 300\n" +                                    // 7
         (source_line.empty() ? "" : "  " + source_line + "\n") +  // 8
         "max_restarts: 0\n" +
         storage;
}

class WarmStartTest : public testing::LifecycleFixture {
 protected:
  void TearDown() override {
    std::filesystem::remove_all(options_.checkpoint_root);
    LifecycleFixture::TearDown();
  }

  // A checkpoint of the allocation's trial at `batches`, written and registered.
  std::string Checkpoint(const std::string& alloc, const std::string& token, int batches) {
    auto issued = controller_.PrepareCheckpoint(alloc, token);
    EXPECT_TRUE(issued.ok()) << issued.status().ToString();
    if (!issued.ok()) return "";
    const std::string dir = options_.checkpoint_root + "/" + issued->uuid;
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/state.bin") << "0123456789";
    nlohmann::json body = {
        {"uuid", issued->uuid},
        {"batches", batches},
        {"resources", {{{"path", "state.bin"}, {"size", 10}, {"sha256", std::string(64, 'a')}}}},
        {"metadata", nlohmann::json::object()}};
    auto registered = controller_.RegisterCheckpoint(alloc, token, body);
    EXPECT_TRUE(registered.ok()) << registered.status().ToString();
    return issued->uuid;
  }

  // Experiment 1 (alice's): trial 1 running on agent-1 with a checkpoint at 200 batches.
  void RunSource(const std::string& storage = "") {
    source_exp_ = CreateFrom(Config("", storage));
    channel_ = Connect("agent-1", 2);
    token1_ = channel_->Of<proto::Start>().at(0).allocation_token;
    Report("agent-1", "1.0", proto::ProcessState::kRunning);
    first_ = Checkpoint("1.0", token1_, 100);
    second_ = Checkpoint("1.0", token1_, 200);
  }

  ConfigCheck Check(const std::string& yaml, const Submitter& who) {
    return controller_.lifecycle().Run([&](Lifecycle& l) { return l.experiments().Check(yaml, who); });
  }
  Result<int64_t> Create(const std::string& yaml, const Submitter& who) {
    return controller_.lifecycle().Run(
        [&](Lifecycle& l) { return l.experiments().Create(yaml, model_, true, who); });
  }
  int64_t Experiments() { return store_.ListExperiments(100, 0)->total; }

  // The one error of a refused config: its path, line and message.
  static ConfigIssue OnlyError(const ConfigCheck& check) {
    EXPECT_FALSE(check.config.has_value());
    EXPECT_EQ(check.errors.size(), 1u);
    return check.errors.empty() ? ConfigIssue{} : check.errors[0];
  }

  int64_t source_exp_ = 0;
  std::shared_ptr<testing::RecordingChannel> channel_;
  std::string token1_, first_, second_;
};

TEST_F(WarmStartTest, TrialsStartFromTheSourceTrialsLatestCheckpointUntilTheyWriteTheirOwn) {
  RunSource();
  auto id = Create(Config("source_trial_id: 1"), Submitter{"alice"});
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_EQ(store_.GetExperiment(*id)->warm_start_checkpoint, second_);
  EXPECT_EQ(store_.GetTrial(2)->latest_checkpoint, second_);
  auto starts = channel_->Of<proto::Start>();
  ASSERT_EQ(starts.size(), 2u);
  EXPECT_EQ(starts[1].allocation_id, "2.0");
  EXPECT_EQ(starts[1].latest_checkpoint, options_.checkpoint_root + "/" + second_);
  // The trial verifies the source as it verifies its own latest checkpoint;
  // another trial's checkpoint that is not its source stays refused.
  const std::string token2 = starts[1].allocation_token;
  EXPECT_EQ(controller_.TrialCheckpoint("2.0", token2, second_)->batches, 200);
  EXPECT_EQ(controller_.TrialCheckpoint("2.0", token2, first_).status().code(), ErrorCode::kNotFound);

  // Later checkpoints of the source trial change nothing for experiment 2.
  const std::string third = Checkpoint("1.0", token1_, 300);
  EXPECT_EQ(store_.GetTrial(1)->latest_checkpoint, third);
  EXPECT_EQ(store_.GetExperiment(*id)->warm_start_checkpoint, second_);

  // The trial's first own checkpoint is its latest, though at fewer batches.
  Report("agent-1", "2.0", proto::ProcessState::kRunning);
  const std::string own = Checkpoint("2.0", token2, 50);
  EXPECT_EQ(store_.GetTrial(2)->latest_checkpoint, own);
  const std::string own_earlier = Checkpoint("2.0", token2, 40);
  EXPECT_EQ(store_.GetTrial(2)->latest_checkpoint, own);  // then the usual rule: the most batches
  (void)own_earlier;
}

TEST_F(WarmStartTest, SourceCheckpointUuidStartsFromThatCheckpoint) {
  RunSource();
  auto id = Create(Config("source_checkpoint_uuid: " + first_), Submitter{"alice"});
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_EQ(store_.GetExperiment(*id)->warm_start_checkpoint, first_);
  EXPECT_EQ(channel_->Of<proto::Start>().at(1).latest_checkpoint, options_.checkpoint_root + "/" + first_);
}

TEST_F(WarmStartTest, EachRefusalNamesItsKeyAndLineAndCreatesNothing) {
  RunSource();
  // A trial of experiment 2 with no checkpoint of its own: trial 2.
  ASSERT_TRUE(Create(Config(""), Submitter{"alice"}).ok());
  const int64_t before = Experiments();
  struct Case {
    std::string line;
    Submitter who;
    std::string key;
    std::string says;
    ErrorCode code;
  };
  const std::vector<Case> cases = {
      {"source_trial_id: 99",
       {"alice"},
       "searcher.source_trial_id",
       "trial 99, which does not exist",
       ErrorCode::kInvalidConfig},
      {"source_trial_id: 2",
       {"alice"},
       "searcher.source_trial_id",
       "no completed checkpoint",
       ErrorCode::kInvalidConfig},
      {"source_checkpoint_uuid: 00000000-0000-4000-8000-000000000000",
       {"alice"},
       "searcher.source_checkpoint_uuid",
       "not a completed checkpoint",
       ErrorCode::kInvalidConfig},
      {"source_trial_id: 1",
       {"bob", false, false},
       "searcher.source_trial_id",
       "only its owner, an admin or a member of its workspace may start from it (this master has "
       "experiments_team_readable: false)",
       ErrorCode::kPermissionDenied},
      {"source_checkpoint_uuid: " + first_,
       {"bob", false, false},
       "searcher.source_checkpoint_uuid",
       "experiments_team_readable: false",
       ErrorCode::kPermissionDenied},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.line + " as " + c.who.username);
    const ConfigIssue issue = OnlyError(Check(Config(c.line), c.who));
    EXPECT_EQ(issue.path, c.key);
    EXPECT_EQ(issue.line, 8);
    EXPECT_EQ(issue.message.rfind(c.key + " ", 0), 0u) << issue.message;
    EXPECT_NE(issue.message.find(c.says), std::string::npos) << issue.message;
    auto created = Create(Config(c.line), c.who);
    ASSERT_FALSE(created.ok());
    EXPECT_EQ(created.status().code(), c.code);
    EXPECT_EQ(created.status().message().rfind("experiment.yaml:8: " + c.key + " ", 0), 0u)
        << created.status().message();
    EXPECT_EQ(Experiments(), before);
  }
  // A garbage-collected checkpoint is no source either.
  ASSERT_TRUE(store_.SetCheckpointState(first_, CheckpointState::kDeleted).ok());
  const ConfigIssue gone = OnlyError(Check(Config("source_checkpoint_uuid: " + first_), Submitter{"alice"}));
  EXPECT_NE(gone.message.find("garbage collected"), std::string::npos) << gone.message;
  EXPECT_EQ(gone.line, 8);
}

TEST_F(WarmStartTest, OthersMayStartFromItWhenTeamReadableAndAdminsAlways) {
  RunSource();
  EXPECT_TRUE(Check(Config("source_trial_id: 1"), {"bob", false, true}).config.has_value());
  EXPECT_TRUE(Check(Config("source_trial_id: 1"), {"root", true, false}).config.has_value());
  auto id = Create(Config("source_trial_id: 1"), {"bob", false, true});
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_EQ(store_.GetExperiment(*id)->owner, "bob");
}

// On agents that run trials as their owners' Unix accounts, another account
// cannot read a checkpoint folder (0770, files 0640, the master's group).
TEST_F(WarmStartTest, RefusedWhenTheSubmittersTrialsRunAsAnotherUnixAccount) {
  RunSource();
  AgentRecord agent;
  agent.id = "switching";
  agent.pool = "default";
  agent.runs_as_owner = true;
  ASSERT_TRUE(store_.UpsertAgent(agent).ok());
  UserRecord alice{.username = "alice"}, bob{.username = "bob"}, carol{.username = "carol"};
  const int64_t alice_id = *store_.CreateUser(alice);
  const int64_t bob_id = *store_.CreateUser(bob);
  ASSERT_TRUE(store_.CreateUser(carol).ok());
  // Neither linked: both run as the agents' account for unlinked users.
  EXPECT_TRUE(Check(Config("source_trial_id: 1"), {"bob"}).config.has_value());
  ASSERT_TRUE(store_.SetUserUnixAccount(alice_id, UserUnixAccount{1001, 1001, "alice", "alice"}).ok());
  const ConfigIssue issue = OnlyError(Check(Config("source_trial_id: 1"), {"bob"}));
  EXPECT_EQ(issue.path, "searcher.source_trial_id");
  EXPECT_EQ(issue.line, 8);
  EXPECT_NE(issue.message.find("run trials as their owners' Unix accounts"), std::string::npos)
      << issue.message;
  EXPECT_NE(issue.message.find("alice's trials run as uid 1001"), std::string::npos) << issue.message;
  auto created = Create(Config("source_trial_id: 1"), {"bob", true, true});  // admins too: it is the disk
  EXPECT_EQ(created.status().code(), ErrorCode::kPermissionDenied);
  // The same account reads it; so does the owner.
  ASSERT_TRUE(store_.SetUserUnixAccount(bob_id, UserUnixAccount{1001, 1001, "alice", "alice"}).ok());
  EXPECT_TRUE(Check(Config("source_trial_id: 1"), {"bob"}).config.has_value());
  EXPECT_TRUE(Check(Config("source_trial_id: 1"), {"alice"}).config.has_value());
  EXPECT_FALSE(Check(Config("source_trial_id: 1"), {"carol"}).config.has_value());
}

// save_trial_latest 1, save_trial_best 0: when trial 1 ends, everything but
// its latest checkpoint goes, except the one experiment 2 starts from,
// which goes when experiment 2 ends.
TEST_F(WarmStartTest, GarbageCollectionKeepsASourceUntilItsExperimentsEnd) {
  RunSource("checkpoint_storage:\n  save_trial_best: 0\n  save_trial_latest: 1\n");
  auto id = Create(Config("source_checkpoint_uuid: " + first_), Submitter{"alice"});
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  ASSERT_TRUE(controller_.Kill(source_exp_).ok());
  Report("agent-1", "1.0", proto::ProcessState::kExited, std::nullopt, 15);
  ASSERT_EQ(store_.GetExperiment(source_exp_)->state, RunState::kCanceled);
  EXPECT_EQ(store_.GetCheckpoint(first_)->state, CheckpointState::kActive);
  EXPECT_TRUE(std::filesystem::exists(options_.checkpoint_root + "/" + first_));
  EXPECT_EQ(store_.GetCheckpoint(second_)->state, CheckpointState::kActive);  // the trial's latest

  ASSERT_TRUE(controller_.Kill(*id).ok());
  Report("agent-1", "2.0", proto::ProcessState::kExited, std::nullopt, 15);
  ASSERT_EQ(store_.GetExperiment(*id)->state, RunState::kCanceled);
  EXPECT_EQ(store_.GetCheckpoint(first_)->state, CheckpointState::kDeleted);
  EXPECT_FALSE(std::filesystem::exists(options_.checkpoint_root + "/" + first_));
  EXPECT_EQ(store_.GetCheckpoint(second_)->state, CheckpointState::kActive);
}

}  // namespace
}  // namespace ring
