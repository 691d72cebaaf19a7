// The one-time tickets that open shells' terminals from browsers: once, in
// time, for one user and shell, within bounds, from several threads.
#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include "master/auth/terminal_tickets.h"

namespace ring {
namespace {

using namespace std::chrono_literals;
using Clock = TerminalTickets::Clock;

TEST(TerminalTickets, ATicketWorksOnceForItsUserAndShell) {
  TerminalTickets tickets;
  const auto t0 = Clock::time_point{} + 1h;
  auto ticket = tickets.Issue({7, "ada"}, t0);
  ASSERT_TRUE(ticket.ok());
  EXPECT_EQ(ticket->size(), 64u);
  EXPECT_EQ(ticket->find_first_not_of("0123456789abcdef"), std::string::npos) << "safe in a URL as it is";
  auto grant = tickets.Redeem(*ticket, t0 + 1s);
  ASSERT_TRUE(grant.ok()) << grant.status().message();
  EXPECT_EQ(grant->task_id, 7);
  EXPECT_EQ(grant->username, "ada");
  auto again = tickets.Redeem(*ticket, t0 + 2s);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), ErrorCode::kUnauthenticated);
  EXPECT_NE(again.status().message().find("used already"), std::string::npos) << again.status().message();
  EXPECT_FALSE(tickets.Redeem("", t0).ok());
  EXPECT_FALSE(tickets.Redeem(std::string(64, 'a'), t0).ok());
  EXPECT_EQ(tickets.size(), 0u);
}

TEST(TerminalTickets, ATicketExpiresAfterItsTtlAndIsForgotten) {
  TerminalTickets tickets;  // 60 s
  EXPECT_EQ(tickets.options().ttl, 60s);
  const auto t0 = Clock::time_point{} + 1h;
  auto in_time = tickets.Issue({1, "ada"}, t0);
  auto late = tickets.Issue({1, "ada"}, t0);
  ASSERT_TRUE(in_time.ok() && late.ok());
  EXPECT_TRUE(tickets.Redeem(*in_time, t0 + 59s).ok());
  auto expired = tickets.Redeem(*late, t0 + 60s);
  ASSERT_FALSE(expired.ok());
  EXPECT_EQ(expired.status().code(), ErrorCode::kUnauthenticated);
  EXPECT_EQ(tickets.size(), 0u) << "an expired ticket is forgotten when tried";
}

TEST(TerminalTickets, AtMostMaxTicketsWaitAndExpiredOnesMakeRoom) {
  TerminalTickets tickets({.ttl = 60s, .max_tickets = 2});
  const auto t0 = Clock::time_point{} + 1h;
  ASSERT_TRUE(tickets.Issue({1, "ada"}, t0).ok());
  ASSERT_TRUE(tickets.Issue({2, "ada"}, t0 + 10s).ok());
  auto full = tickets.Issue({3, "ada"}, t0 + 20s);
  ASSERT_FALSE(full.ok());
  EXPECT_EQ(full.status().code(), ErrorCode::kTooManyRequests);
  EXPECT_TRUE(tickets.Issue({3, "ada"}, t0 + 61s).ok()) << "the first expired: room for one";
  EXPECT_EQ(tickets.size(), 2u);
}

TEST(TerminalTickets, EachOfManyTicketsRedeemedFromManyThreadsWorksExactlyOnce) {
  TerminalTickets tickets;
  const auto t0 = Clock::now();
  std::vector<std::string> issued;
  for (int i = 0; i < 200; ++i) issued.push_back(*tickets.Issue({i, "ada"}, t0));
  EXPECT_EQ(std::set<std::string>(issued.begin(), issued.end()).size(), issued.size());
  std::atomic<int> redeemed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (const auto& ticket : issued)
        if (tickets.Redeem(ticket, t0 + 1s).ok()) ++redeemed;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(redeemed.load(), 200);
}

}  // namespace
}  // namespace ring
