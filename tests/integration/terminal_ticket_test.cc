// Terminal tickets against a real master and agent: how a browser opens a
// shell's terminal (POST /api/v1/shells/{id}/terminal/ticket, then the
// WebSocket with ?ticket=). A ticket opens its shell once, for the user who
// asked; a second use, another shell's ticket, another user's request, an
// allocation token and a user deactivated since are refused before any
// upgrade. (Expiry after its minute is tests/unit/master/terminal_tickets_test.cc's,
// on a clock of its own, rather than a minute's wait here.)
#include <gtest/gtest.h>

#include <regex>

#include "tests/support/raw_websocket.h"
#include "tests/support/test_cluster.h"

namespace ring::testing::terminal_ticket {
namespace {

using namespace std::chrono_literals;

// A browser's side of the terminal WebSocket: no token, the ticket in the
// target. Refused, `status` and `body` are the master's answer.
class TerminalSocket {
 public:
  TerminalSocket(int port, const std::string& target) : ws_(port, target, {}) {
    status = ws_.status();
    if (!upgraded()) body = ws_.RefusalBody();
  }
  bool upgraded() const { return status == 101; }

  bool Type(const std::string& keys) {
    if (!upgraded()) return false;
    ws_.SendBinary(keys);
    return true;
  }
  // Reads what the terminal shows until `pattern` matches it (or 20 s).
  bool WaitFor(const std::string& pattern) {
    const std::regex re(pattern);
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while (!std::regex_search(screen, re)) {
      if (!upgraded() || std::chrono::steady_clock::now() >= deadline) return false;
      if (auto frame = ws_.ReadFrame()) screen += *frame;
    }
    return true;
  }

  int status = 0;
  std::string body;
  std::string screen;

 private:
  RawWebSocket ws_;
};

struct Answer {
  int status = 0;
  nlohmann::json body;
};

Answer Post(TestCluster& cluster, const std::string& token, const std::string& target,
            const std::string& body = "") {
  auto client = cluster.NewClient();
  client->SetBearerToken(token);
  auto res = client->Request("POST", target, body);
  EXPECT_TRUE(res.ok()) << res.status().message();
  if (!res.ok()) return {};
  return {res->status, nlohmann::json::parse(res->body, nullptr, false)};
}

std::string TicketPath(int64_t shell) {
  return "/api/v1/shells/" + std::to_string(shell) + "/terminal/ticket";
}
std::string TerminalPath(int64_t shell, const std::string& ticket) {
  return "/api/v1/shells/" + std::to_string(shell) + "/terminal?ticket=" + ticket + "&rows=30&cols=100";
}

// A new ticket of `token`'s user for `shell`; "" when refused.
std::string Ticket(TestCluster& cluster, const std::string& token, int64_t shell) {
  auto a = Post(cluster, token, TicketPath(shell));
  EXPECT_EQ(a.status, 200) << a.body.dump();
  if (a.status != 200) return "";
  EXPECT_EQ(a.body["expires_in_s"], 60);
  return a.body["ticket"].get<std::string>();
}

int64_t StartShell(TestCluster& cluster, const std::string& token) {
  auto a = Post(cluster, token, "/api/v1/shells", R"({"slots": 1})");
  EXPECT_EQ(a.status, 201) << a.body.dump();
  const int64_t id = a.status == 201 ? a.body["id"].get<int64_t>() : 0;
  EXPECT_TRUE(TestCluster::WaitFor(
      [&] { return cluster.GetJson("/api/v1/shells/" + std::to_string(id))["state"] == "RUNNING"; }, 30s))
      << cluster.GetJson("/api/v1/shells/" + std::to_string(id)).dump();
  return id;
}

TEST(TerminalTicket, ATicketOpensItsShellOnceForItsUserOnly) {
  TestCluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("a1", 2);
  const int port = PortOf(cluster.url());
  const std::string ada = cluster.CreateUser("ada", "ada-password");
  const std::string bob = cluster.CreateUser("bob", "bob-password");
  const int64_t a = StartShell(cluster, ada);
  const int64_t b = StartShell(cluster, ada);
  ASSERT_GT(a, 0);
  ASSERT_GT(b, 0);
  // A ticket opens the terminal, with the size of its query, once.
  const std::string ticket = Ticket(cluster, ada, a);
  ASSERT_EQ(ticket.size(), 64u);
  std::string allocation_token;
  {
    TerminalSocket term(port, TerminalPath(a, ticket));
    ASSERT_TRUE(term.upgraded()) << term.status << " " << term.body;
    ASSERT_TRUE(term.Type("echo tick-$((6*7)) $(stty size)\r"));
    ASSERT_TRUE(term.WaitFor("tick-42 30 100")) << term.screen;
    ASSERT_TRUE(term.Type("echo token=$RING_ALLOCATION_TOKEN.\r"));
    ASSERT_TRUE(term.WaitFor("token=[0-9a-f]{64}\\.")) << term.screen;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(term.screen, m, std::regex("token=([0-9a-f]{64})\\.")));
    allocation_token = m[1];
  }
  {
    TerminalSocket again(port, TerminalPath(a, ticket));
    EXPECT_FALSE(again.upgraded());
    EXPECT_EQ(again.status, 401) << again.body;
    EXPECT_NE(again.body.find("used already"), std::string::npos) << again.body;
  }

  // A ticket for shell A opens no other shell, and is used up by trying.
  const std::string for_a = Ticket(cluster, ada, a);
  {
    TerminalSocket other(port, TerminalPath(b, for_a));
    EXPECT_FALSE(other.upgraded());
    EXPECT_EQ(other.status, 403) << other.body;
    EXPECT_NE(other.body.find("of shell " + std::to_string(a) + ", not of shell " + std::to_string(b)),
              std::string::npos)
        << other.body;
    TerminalSocket after(port, TerminalPath(a, for_a));
    EXPECT_EQ(after.status, 401) << after.body;
  }

  // Without a ticket or a token, with a made-up ticket: 401.
  for (const std::string& target :
       {"/api/v1/shells/" + std::to_string(a) + "/terminal", TerminalPath(a, std::string(64, 'a'))}) {
    TerminalSocket none(port, target);
    EXPECT_FALSE(none.upgraded()) << target;
    EXPECT_EQ(none.status, 401) << target << ": " << none.body;
  }

  // Another user gets no ticket; an admin does, and it opens ada's shell.
  auto refused = Post(cluster, bob, TicketPath(a));
  EXPECT_EQ(refused.status, 403) << refused.body.dump();
  EXPECT_NE(refused.body.dump().find("belongs to ada"), std::string::npos) << refused.body.dump();
  const std::string admins = Ticket(cluster, cluster.admin_token(), a);
  {
    TerminalSocket term(port, TerminalPath(a, admins));
    ASSERT_TRUE(term.upgraded()) << term.status << " " << term.body;
    EXPECT_TRUE(term.WaitFor("tick-42")) << "the screen so far comes first: " << term.screen;
  }

  // An allocation token, even the shell's own, gets none.
  ASSERT_EQ(allocation_token.size(), 64u);
  auto by_task = Post(cluster, allocation_token, TicketPath(a));
  EXPECT_EQ(by_task.status, 401) << by_task.body.dump();
  EXPECT_EQ(Post(cluster, ada, "/api/v1/shells/999/terminal/ticket").status, 404);

  // The user is checked again when the ticket is used: deactivated since, refused.
  const std::string before_deactivation = Ticket(cluster, ada, b);
  int64_t ada_id = 0;
  const auto users = cluster.GetJson("/api/v1/users");
  for (const auto& u : users["users"])
    if (u["username"] == "ada") ada_id = u["id"].get<int64_t>();
  auto patched =
      cluster.client().Request("PATCH", "/api/v1/users/" + std::to_string(ada_id), R"({"active": false})");
  ASSERT_TRUE(patched.ok());
  ASSERT_EQ(patched->status, 200) << ada_id << " " << patched->body;
  {
    TerminalSocket term(port, TerminalPath(b, before_deactivation));
    EXPECT_FALSE(term.upgraded());
    EXPECT_EQ(term.status, 401) << term.body;
    EXPECT_NE(term.body.find("deactivated"), std::string::npos) << term.body;
  }

  // An ended shell gives no ticket.
  auto killed = Post(cluster, cluster.admin_token(), "/api/v1/shells/" + std::to_string(b) + "/kill");
  ASSERT_EQ(killed.status, 200) << killed.body.dump();
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] { return !cluster.GetJson("/api/v1/shells/" + std::to_string(b))["ended_at"].is_null(); }, 30s));
  auto ended = Post(cluster, cluster.admin_token(), TicketPath(b));
  EXPECT_EQ(ended.status, 409) << ended.body.dump();
}

}  // namespace
}  // namespace ring::testing::terminal_ticket
