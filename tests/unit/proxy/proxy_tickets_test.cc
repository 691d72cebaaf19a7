// One-time tickets and the cookie sessions they become: once, in time, for
// one task, within bounds.
#include <gtest/gtest.h>

#include "master/proxy/proxy_tickets.h"

namespace ring {
namespace {

using namespace std::chrono_literals;
using Clock = ProxyTickets::Clock;

TEST(ProxyTickets, ATicketWorksOnceAndBecomesACookieForItsTaskOnly) {
  ProxyTickets tickets;
  const auto t0 = Clock::time_point{} + 1h;
  auto ticket = tickets.Issue({7, "ada"}, t0);
  ASSERT_TRUE(ticket.ok());
  EXPECT_EQ(ticket->size(), 64u);
  auto session = tickets.Redeem(*ticket, t0 + 1s);
  ASSERT_TRUE(session.ok()) << session.status().message();
  EXPECT_EQ(session->grant.task_id, 7);
  EXPECT_EQ(session->grant.username, "ada");
  EXPECT_NE(session->cookie, *ticket);
  // Once only.
  auto again = tickets.Redeem(*ticket, t0 + 2s);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), ErrorCode::kUnauthenticated);
  // The cookie names its task; the ticket itself is no cookie.
  auto grant = tickets.Check(session->cookie, t0 + 3s);
  ASSERT_TRUE(grant);
  EXPECT_EQ(grant->task_id, 7);
  EXPECT_FALSE(tickets.Check(*ticket, t0 + 3s));
  EXPECT_FALSE(tickets.Check("", t0 + 3s));
  EXPECT_FALSE(tickets.Check(std::string(64, 'a'), t0 + 3s));
}

TEST(ProxyTickets, TicketsAndSessionsExpire) {
  ProxyTicketOptions options;
  options.ticket_ttl = 60s;
  options.session_ttl = 3600s;
  ProxyTickets tickets(options);
  const auto t0 = Clock::time_point{} + 1h;
  auto late = tickets.Issue({1, "ada"}, t0);
  ASSERT_TRUE(late.ok());
  EXPECT_FALSE(tickets.Redeem(*late, t0 + 60s).ok());
  EXPECT_EQ(tickets.tickets(), 0u) << "an expired ticket is forgotten when tried";

  auto ticket = tickets.Issue({1, "ada"}, t0);
  auto session = tickets.Redeem(*ticket, t0 + 59s);
  ASSERT_TRUE(session.ok());
  EXPECT_TRUE(tickets.Check(session->cookie, t0 + 59s + 3599s));
  EXPECT_FALSE(tickets.Check(session->cookie, t0 + 59s + 3600s));
}

TEST(ProxyTickets, WaitingTicketsAreBoundedAndExpiredOnesMakeRoom) {
  ProxyTicketOptions options;
  options.max_tickets = 2;
  ProxyTickets tickets(options);
  const auto t0 = Clock::time_point{} + 1h;
  ASSERT_TRUE(tickets.Issue({1, "ada"}, t0).ok());
  ASSERT_TRUE(tickets.Issue({1, "ada"}, t0).ok());
  auto refused = tickets.Issue({1, "ada"}, t0 + 1s);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), ErrorCode::kTooManyRequests);
  EXPECT_TRUE(tickets.Issue({1, "ada"}, t0 + options.ticket_ttl).ok());
  EXPECT_EQ(tickets.tickets(), 1u);
}

TEST(ProxyTickets, SessionsAreBoundedAndTheOldestGoesFirst) {
  ProxyTicketOptions options;
  options.max_sessions = 2;
  ProxyTickets tickets(options);
  const auto t0 = Clock::time_point{} + 1h;
  std::vector<std::string> cookies;
  for (int i = 0; i < 3; ++i) {
    auto ticket = tickets.Issue({i + 1, "ada"}, t0 + std::chrono::seconds(i));
    auto session = tickets.Redeem(*ticket, t0 + std::chrono::seconds(i));
    ASSERT_TRUE(session.ok());
    cookies.push_back(session->cookie);
  }
  EXPECT_EQ(tickets.sessions(), 2u);
  EXPECT_FALSE(tickets.Check(cookies[0], t0 + 5s));
  EXPECT_TRUE(tickets.Check(cookies[1], t0 + 5s));
  EXPECT_TRUE(tickets.Check(cookies[2], t0 + 5s));
}

}  // namespace
}  // namespace ring
