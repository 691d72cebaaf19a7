// Who holds the master's connections: users' connections are capped in all
// and per address; an agent's channel stops counting against users.
#include <gtest/gtest.h>

#include <vector>

#include "master/http/connection_counts.h"

namespace ring {
namespace {

TEST(ConnectionCountsTest, OneAddressIsCappedBeforeTheTotal) {
  ConnectionCounts counts(5, 2);
  std::vector<ConnectionCounts::Ticket> open;
  open.push_back(counts.Open("10.0.0.1"));
  open.push_back(counts.Open("10.0.0.1"));
  EXPECT_EQ(open.back().refusal(), ConnectionRefusal::kNone);
  open.push_back(counts.Open("10.0.0.1"));
  EXPECT_EQ(open.back().refusal(), ConnectionRefusal::kPerAddress);
  open.push_back(counts.Open("10.0.0.2"));
  open.push_back(counts.Open("10.0.0.2"));
  EXPECT_EQ(open.back().refusal(), ConnectionRefusal::kNone);
  open.push_back(counts.Open("10.0.0.3"));
  EXPECT_EQ(open.back().refusal(), ConnectionRefusal::kTotal);
  EXPECT_EQ(counts.users(), 6u);
  open.clear();
  EXPECT_EQ(counts.users(), 0u);
  EXPECT_EQ(counts.Open("10.0.0.1").refusal(), ConnectionRefusal::kNone);
}

TEST(ConnectionCountsTest, AgentsAreCountedApartAndFreeTheirPlace) {
  ConnectionCounts counts(2, 1);
  auto agent = counts.Open("10.0.0.1");
  auto user = counts.Open("10.0.0.1");
  EXPECT_EQ(user.refusal(), ConnectionRefusal::kPerAddress);
  agent.BecomeAgent();
  EXPECT_EQ(counts.users(), 1u);
  EXPECT_EQ(counts.agents(), 1u);
  EXPECT_EQ(counts.Open("10.0.0.2").refusal(), ConnectionRefusal::kNone);
  { auto moved = std::move(agent); }
  EXPECT_EQ(counts.agents(), 0u);
  EXPECT_EQ(counts.users(), 1u);
}

}  // namespace
}  // namespace ring
