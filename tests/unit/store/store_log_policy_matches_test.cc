// Log policy matches: the first of each (trial, policy, node) is kept, a
// retried one is ignored, and the latest names the trial's log signal in
// GetTrial and ListTrials. Both Store implementations.
#include <gtest/gtest.h>

#include "tests/unit/store/store_holders.h"

namespace ring {
namespace {

template <typename Holder>
class StoreLogPolicyMatchesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto exp = store().CreateExperiment(ExperimentRecord{.name = "e", .owner = "o", .config_yaml = "x"}, "m");
    ASSERT_TRUE(exp.ok());
    experiment_ = *exp;
    TrialRecord t;
    t.experiment_id = experiment_;
    trial_ = *store().CreateTrial(t);
    other_ = *store().CreateTrial(t);
  }
  Store& store() { return *holder_.store; }
  LogPolicyMatch Match(std::string policy, LogPolicyAction action, std::string node) {
    return {trial_, std::move(policy), action, std::move(node), "1.0", 0, "the line", ""};
  }
  Holder holder_;
  int64_t experiment_ = 0;
  int64_t trial_ = 0;
  int64_t other_ = 0;
};

TYPED_TEST_SUITE(StoreLogPolicyMatchesTest, testing::BothStores);

TYPED_TEST(StoreLogPolicyMatchesTest, KeepsTheFirstOfEachPolicyAndNode) {
  Store& s = this->store();
  EXPECT_EQ(s.GetTrial(this->trial_)->log_signal, "");
  EXPECT_TRUE(*s.AddLogPolicyMatch(this->Match("ECC", LogPolicyAction::kExcludeNode, "a1")));
  auto again = this->Match("ECC", LogPolicyAction::kExcludeNode, "a1");
  again.line = "a later line";
  EXPECT_FALSE(*s.AddLogPolicyMatch(again)) << "a retried match is ignored";
  EXPECT_TRUE(*s.AddLogPolicyMatch(this->Match("ECC", LogPolicyAction::kExcludeNode, "a2")));
  EXPECT_TRUE(*s.AddLogPolicyMatch(this->Match("CUDA OOM", LogPolicyAction::kNone, "a2")));

  auto matches = s.ListLogPolicyMatches(this->trial_);
  ASSERT_TRUE(matches.ok()) << matches.status().ToString();
  ASSERT_EQ(matches->size(), 3u);
  EXPECT_EQ((*matches)[0].policy, "ECC");
  EXPECT_EQ((*matches)[0].node, "a1");
  EXPECT_EQ((*matches)[0].line, "the line");
  EXPECT_EQ((*matches)[0].action, LogPolicyAction::kExcludeNode);
  EXPECT_FALSE((*matches)[0].matched_at.empty());
  EXPECT_EQ((*matches)[2].action, LogPolicyAction::kNone);

  EXPECT_EQ(s.GetTrial(this->trial_)->log_signal, "CUDA OOM") << "the latest match";
  auto trials = s.ListTrials(this->experiment_);
  ASSERT_EQ(trials->size(), 2u);
  EXPECT_EQ((*trials)[0].log_signal, "CUDA OOM");
  EXPECT_EQ((*trials)[1].log_signal, "") << "another trial's matches are its own";
  EXPECT_TRUE(s.ListLogPolicyMatches(this->other_)->empty());
}

TYPED_TEST(StoreLogPolicyMatchesTest, SavingATrialKeepsItsSignal) {
  Store& s = this->store();
  auto trial = *s.GetTrial(this->trial_);  // read before the match: no signal
  ASSERT_TRUE(s.AddLogPolicyMatch(this->Match("OOM", LogPolicyAction::kCancelRetries, "a1")).ok());
  trial.restarts = 1;
  ASSERT_TRUE(s.UpdateTrial(trial).ok());
  EXPECT_EQ(s.GetTrial(this->trial_)->log_signal, "OOM");
}

TYPED_TEST(StoreLogPolicyMatchesTest, AMatchOfAnUnknownTrialIsRefused) {
  auto m = this->Match("OOM", LogPolicyAction::kCancelRetries, "a1");
  m.trial_id = this->other_ + 100;
  EXPECT_FALSE(this->store().AddLogPolicyMatch(m).ok());
}

}  // namespace
}  // namespace ring
