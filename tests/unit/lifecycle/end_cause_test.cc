// The names of EndCause are a stored and served contract (the allocation's
// end_cause column, the REST field `end_cause`): each is spelled here once,
// so renaming one is a decision made on purpose.
#include "common/end_cause.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>

namespace ring {
namespace {

const std::pair<EndCause, const char*> kNames[] = {
    {EndCause::kCompleted, "COMPLETED"},
    {EndCause::kFailed, "FAILED"},
    {EndCause::kGangMemberFailed, "GANG_MEMBER_FAILED"},
    {EndCause::kUserKill, "USER_KILL"},
    {EndCause::kPaused, "PAUSED"},
    {EndCause::kPreempted, "PREEMPTED"},
    {EndCause::kAgentLost, "AGENT_LOST"},
    {EndCause::kAgentRestarted, "AGENT_RESTARTED"},
    {EndCause::kInvalidHparams, "INVALID_HPARAMS"},
    {EndCause::kExitedEarly, "EXITED_EARLY"},
    {EndCause::kFencedOut, "FENCED_OUT"},
    {EndCause::kSearcherStopped, "SEARCHER_STOPPED"},
};

TEST(EndCauseTest, EveryCauseHasItsStoredName) {
  for (const auto& [cause, name] : kNames) EXPECT_EQ(ToString(cause), name);
}

TEST(EndCauseTest, ParseIsTheInverseOfToString) {
  std::set<std::string> seen;
  for (const auto& [cause, name] : kNames) {
    EXPECT_TRUE(seen.insert(name).second) << name << " names two causes";
    EXPECT_EQ(ParseEndCause(ToString(cause)), cause) << name;
  }
}

TEST(EndCauseTest, ParseRefusesWhatIsNotAName) {
  EXPECT_EQ(ParseEndCause(""), std::nullopt);
  EXPECT_EQ(ParseEndCause("completed"), std::nullopt);  // names are upper case, as stored
  EXPECT_EQ(ParseEndCause("UNKNOWN"), std::nullopt);
  EXPECT_EQ(ParseEndCause("COMPLETED "), std::nullopt);
}

}  // namespace
}  // namespace ring
