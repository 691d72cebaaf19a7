// Who holds the master's connections: users' connections are capped in all
// and per address (but for the addresses an operator exempts); an agent's
// channel stops counting against users.
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

TEST(ConnectionCountsTest, ExemptAddressesCountOnlyInAll) {
  auto exempt = AddressRanges::Parse({"10.1.0.0/16", "fd00::1"});
  ASSERT_TRUE(exempt.ok()) << exempt.status().message();
  ConnectionCounts counts(4, 1, *exempt);
  std::vector<ConnectionCounts::Ticket> open;
  open.push_back(counts.Open("10.1.2.3"));
  open.push_back(counts.Open("10.1.2.3"));
  open.push_back(counts.Open("::ffff:10.1.9.9"));  // IPv4-mapped: the same range
  for (const auto& t : open) EXPECT_EQ(t.refusal(), ConnectionRefusal::kNone);
  // Others keep the per-address cap.
  open.push_back(counts.Open("10.2.0.1"));
  EXPECT_EQ(open.back().refusal(), ConnectionRefusal::kNone);
  EXPECT_EQ(counts.Open("10.2.0.1").refusal(), ConnectionRefusal::kPerAddress);
  // The total still holds for exempt addresses.
  EXPECT_EQ(counts.Open("10.1.2.3").refusal(), ConnectionRefusal::kTotal);
  open.clear();
  EXPECT_EQ(counts.users(), 0u);
}

TEST(ConnectionCountsTest, NoAddressIsExemptByDefault) {
  ConnectionCounts counts(10, 1);
  auto first = counts.Open("127.0.0.2");
  EXPECT_EQ(counts.Open("127.0.0.2").refusal(), ConnectionRefusal::kPerAddress);
}

TEST(AddressRangesTest, MatchesAddressesAndPrefixes) {
  auto r = AddressRanges::Parse({"192.168.4.0/22", "2001:db8::/32", "127.0.0.2"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->Contains("192.168.7.255"));
  EXPECT_FALSE(r->Contains("192.168.8.0"));
  EXPECT_TRUE(r->Contains("2001:db8:ffff::1"));
  EXPECT_FALSE(r->Contains("2001:db9::1"));
  EXPECT_TRUE(r->Contains("127.0.0.2"));
  EXPECT_FALSE(r->Contains("127.0.0.1"));
  EXPECT_FALSE(r->Contains("?"));
  EXPECT_FALSE(AddressRanges::Parse({"10.0.0.0/"}).ok());
  EXPECT_FALSE(AddressRanges::Parse({"::/129"}).ok());
  EXPECT_FALSE(AddressRanges::Parse({"host.example"}).ok());
  EXPECT_TRUE(AddressRanges::Parse({"0.0.0.0/0"})->Contains("8.8.8.8"));
}

}  // namespace
}  // namespace ring
