// log_policies: patterns in RE2 (Go's syntax), matched anywhere in a line in
// linear time; Determined's default policies and how a config's policies
// replace or turn them off.
#include "common/log_policy.h"

#include <gtest/gtest.h>

#include "common/experiment_config.h"

namespace ring {
namespace {

std::unique_ptr<LogPattern> Compile(const std::string& pattern) {
  std::string error;
  auto p = LogPattern::Compile(pattern, error);
  EXPECT_TRUE(p) << pattern << ": " << error;
  return p;
}

TEST(LogPatternTest, MatchesAnywhereInTheLine) {
  auto p = Compile("out of memory");
  EXPECT_TRUE(p->Matches("RuntimeError: CUDA out of memory. Tried to allocate"));
  EXPECT_FALSE(p->Matches("out of mem"));
  EXPECT_TRUE(Compile(".*CUDA out of memory.*")->Matches("x CUDA out of memory y"));
  EXPECT_TRUE(Compile("^ECC")->Matches("ECC error"));
  EXPECT_FALSE(Compile("^ECC")->Matches("an ECC error"));
  EXPECT_TRUE(Compile("(?i)nccl error")->Matches("NCCL Error 3"));
}

TEST(LogPatternTest, GoSyntaxOnlyAndTheReasonForARefusal) {
  std::string error;
  EXPECT_FALSE(LogPattern::Compile("(", error));
  EXPECT_NE(error.find("missing )"), std::string::npos) << error;
  error.clear();
  EXPECT_FALSE(LogPattern::Compile("(a)\\1", error)) << "backreferences are not Go's syntax";
  EXPECT_FALSE(error.empty());
}

TEST(LogPatternTest, ABacktrackingPatternOnALongLineEnds) {
  // (a+)+$ on "aaaa...b" takes exponential time in a backtracking engine
  // (std::regex would not return, or overflow its stack): RE2 is linear.
  auto p = Compile("(a+)+$");
  EXPECT_FALSE(p->Matches(std::string(20000, 'a') + "b"));
  EXPECT_TRUE(p->Matches(std::string(20000, 'a')));
}

TEST(EffectiveLogPoliciesTest, DefaultsLabelOnly) {
  auto policies = EffectiveLogPolicies({});
  ASSERT_EQ(policies.size(), 2u);
  EXPECT_EQ(policies[0].name, "CUDA OOM");
  EXPECT_EQ(policies[1].name, "ECC Error");
  for (const auto& p : policies) EXPECT_EQ(p.action, LogPolicyAction::kNone);
}

TEST(EffectiveLogPoliciesTest, ConfiguredNamesReplaceOrTurnOffDefaults) {
  std::vector<LogPolicy> configured = {
      {"CUDA OOM", ".*CUDA out of memory.*", LogPolicyAction::kCancelRetries, 3},
      {"ECC Error", std::nullopt, LogPolicyAction::kNone, 5},  // turns it off
      {"", "NCCL timeout", LogPolicyAction::kExcludeNode, 7},  // the older form: no name
      {"mine", "first", LogPolicyAction::kNone, 9},
      {"mine", "second", LogPolicyAction::kExcludeNode, 11},  // the later of a name wins
  };
  auto policies = EffectiveLogPolicies(configured);
  ASSERT_EQ(policies.size(), 3u);
  EXPECT_EQ(policies[0].name, "CUDA OOM");
  EXPECT_EQ(policies[0].action, LogPolicyAction::kCancelRetries);
  EXPECT_EQ(LogPolicyLabel(policies[1]), "NCCL timeout");
  EXPECT_EQ(policies[1].action, LogPolicyAction::kExcludeNode);
  EXPECT_EQ(policies[2].pattern, "second");
}

TEST(LogPolicyActionTest, NamesRoundTrip) {
  for (auto a : {LogPolicyAction::kNone, LogPolicyAction::kCancelRetries, LogPolicyAction::kExcludeNode})
    EXPECT_EQ(ParseLogPolicyAction(ToString(a)), a);
  EXPECT_EQ(ParseLogPolicyAction("restart"), std::nullopt);
}

}  // namespace
}  // namespace ring
