// Every rank's start names its task's owner and, when the owner is linked to
// a Unix account, the account the agent runs it as.
#include <gtest/gtest.h>

#include "tests/unit/lifecycle/lifecycle_test_fixture.h"

namespace ring {
namespace {

constexpr const char* kTwoRanks =
    "name: owned\nentrypoint: ./run.sh\nhyperparameters:\n  lr: 0.5\nsearcher:\n  name: single\n"
    "  metric: validation_loss\n  max_length:\n    batches: 10\nresources:\n  slots_per_trial: 2\n";

class LifecycleOwnerTest : public testing::LifecycleFixture {};

TEST_F(LifecycleOwnerTest, StartsCarryTheOwnersLinkedAccount) {
  auto alice = store_.CreateUser(UserRecord{.username = "alice", .password_hash = "h"});
  ASSERT_TRUE(alice.ok());
  ASSERT_TRUE(store_.SetUserUnixAccount(*alice, UserUnixAccount{1234, 2345, "alice", "team"}).ok());
  CreateFrom(kTwoRanks);  // submitted by alice
  auto channel = Connect("agent-1", 2);
  auto starts = channel->Of<proto::Start>();
  ASSERT_EQ(starts.size(), 2u);
  for (const auto& start : starts) {
    EXPECT_EQ(start.owner, "alice");
    ASSERT_TRUE(start.run_as.has_value()) << "rank " << start.rank;
    EXPECT_EQ(start.run_as->uid, 1234);
    EXPECT_EQ(start.run_as->gid, 2345);
    EXPECT_EQ(start.run_as->user, "alice");
    EXPECT_EQ(start.run_as->group, "team");
  }
}

TEST_F(LifecycleOwnerTest, AnUnlinkedOwnerRunsWithoutAnAccount) {
  ASSERT_TRUE(store_.CreateUser(UserRecord{.username = "alice", .password_hash = "h"}).ok());
  CreateFrom(kTwoRanks);
  auto channel = Connect("agent-1", 2);
  auto starts = channel->Of<proto::Start>();
  ASSERT_EQ(starts.size(), 2u);
  for (const auto& start : starts) {
    EXPECT_EQ(start.owner, "alice");
    EXPECT_FALSE(start.run_as.has_value());
  }
}

TEST_F(LifecycleOwnerTest, ALinkMadeWhileQueuedCountsAtLaunch) {
  auto alice = store_.CreateUser(UserRecord{.username = "alice", .password_hash = "h"});
  ASSERT_TRUE(alice.ok());
  CreateFrom(kTwoRanks);  // waits: no agent yet
  ASSERT_TRUE(store_.SetUserUnixAccount(*alice, UserUnixAccount{4321, 4321, "", ""}).ok());
  auto channel = Connect("agent-1", 2);
  auto starts = channel->Of<proto::Start>();
  ASSERT_EQ(starts.size(), 2u);
  ASSERT_TRUE(starts[0].run_as.has_value());
  EXPECT_EQ(starts[0].run_as->uid, 4321);
}

}  // namespace
}  // namespace ring
