// The master's relay between terminal clients and agents: sessions bound
// to the agent they were opened on, input and resizes to that agent only,
// output to its client, and the attacks of an agent writing into or ending
// another agent's session.
#include <gtest/gtest.h>

#include <vector>

#include "master/interactive/terminal_relay.h"

namespace ring {
namespace terminal_relay_test {
namespace {

struct Sent {
  std::string agent_id;
  proto::Message message;
};

struct Fixture {
  std::vector<Sent> sent;
  std::vector<std::string> output, closed;
  TerminalRelay relay{[this](const std::string& agent, const proto::Message& m) {
    if (agent == "down") return Unavailable("agent down is not connected");
    sent.push_back({agent, m});
    return Status::Ok();
  }};
  TerminalRelay::Client Client() {
    return {[this](std::string bytes) { output.push_back(bytes); },
            [this](std::string reason) { closed.push_back(reason); }};
  }
};

TEST(TerminalRelay, ASessionTalksToItsAgentOnly) {
  Fixture f;
  auto session = f.relay.Open("agent-a", "9.0", 0, 30, 100, f.Client());
  ASSERT_TRUE(session.ok());
  EXPECT_EQ(session->size(), 32u);
  ASSERT_EQ(f.sent.size(), 1u);
  EXPECT_EQ(f.sent[0].agent_id, "agent-a");
  const auto& open = std::get<proto::TerminalOpen>(f.sent[0].message);
  EXPECT_EQ(open.allocation_id, "9.0");
  EXPECT_EQ(open.session, *session);
  EXPECT_EQ(open.rows, 30);

  f.relay.Input(*session, "ls\n");
  f.relay.Resize(*session, 40, 120);
  ASSERT_EQ(f.sent.size(), 3u);
  EXPECT_EQ(std::get<proto::TerminalInput>(f.sent[1].message).data, "ls\n");
  EXPECT_EQ(std::get<proto::TerminalResize>(f.sent[2].message).cols, 120);
  EXPECT_EQ(f.sent[2].agent_id, "agent-a");

  EXPECT_TRUE(f.relay.FromAgent("agent-a", proto::TerminalOutput{*session, "file\r\n"}));
  EXPECT_EQ(f.output, std::vector<std::string>{"file\r\n"});

  f.relay.Close(*session);
  EXPECT_EQ(std::get<proto::TerminalClose>(f.sent.back().message).session, *session);
  EXPECT_EQ(f.relay.sessions(), 0u);
  EXPECT_TRUE(f.closed.empty()) << "the client closed it itself";
  f.relay.Input(*session, "late\n");
  EXPECT_EQ(f.sent.size(), 4u);
}

TEST(TerminalRelay, AnotherAgentCannotWriteIntoOrEndASession) {
  Fixture f;
  auto session = f.relay.Open("agent-a", "9.0", 0, 24, 80, f.Client());
  ASSERT_TRUE(session.ok());
  EXPECT_FALSE(f.relay.FromAgent("agent-b", proto::TerminalOutput{*session, "rm -rf ~"}));
  EXPECT_FALSE(f.relay.FromAgent("agent-b", proto::TerminalClosed{*session, "fake"}));
  EXPECT_FALSE(f.relay.FromAgent("agent-a", proto::TerminalOutput{"made-up", "x"}));
  EXPECT_TRUE(f.output.empty());
  EXPECT_TRUE(f.closed.empty());
  EXPECT_EQ(f.relay.sessions(), 1u);
  EXPECT_TRUE(f.relay.FromAgent("agent-a", proto::TerminalClosed{*session, "the shell exited"}));
  EXPECT_EQ(f.closed, std::vector<std::string>{"the shell exited"});
  EXPECT_EQ(f.relay.sessions(), 0u);
}

TEST(TerminalRelay, AnAgentThatIsGoneEndsItsSessionsAndAnUnreachableOneOpensNone) {
  Fixture f;
  auto a = f.relay.Open("agent-a", "9.0", 0, 24, 80, f.Client());
  auto b = f.relay.Open("agent-b", "8.0", 0, 24, 80, f.Client());
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(*a, *b);
  f.relay.AgentGone("agent-a", "the agent running the shell disconnected");
  EXPECT_EQ(f.closed, std::vector<std::string>{"the agent running the shell disconnected"});
  EXPECT_EQ(f.relay.sessions(), 1u);
  auto down = f.relay.Open("down", "7.0", 0, 24, 80, f.Client());
  EXPECT_FALSE(down.ok());
  EXPECT_EQ(f.relay.sessions(), 1u);
}

TEST(TerminalRelay, AnAllocationIsIdleFromItsLastDetachUntilAClientAttaches) {
  Fixture f;
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(f.relay.IdleSince("9.0", t0), t0) << "never attached: idle from the first look";
  EXPECT_EQ(f.relay.IdleSince("9.0", t0 + std::chrono::seconds(5)), t0);
  auto a = f.relay.Open("agent-a", "9.0", 0, 24, 80, f.Client());
  auto b = f.relay.Open("agent-a", "9.0", 0, 24, 80, f.Client());
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_FALSE(f.relay.IdleSince("9.0", t0).has_value());
  f.relay.Close(*a);
  EXPECT_FALSE(f.relay.IdleSince("9.0", t0).has_value()) << "another client is still attached";
  const auto before = std::chrono::steady_clock::now();
  EXPECT_TRUE(f.relay.FromAgent("agent-a", proto::TerminalClosed{*b, "the shell exited"}));
  const auto since = f.relay.IdleSince("9.0", before + std::chrono::hours(1));
  ASSERT_TRUE(since.has_value());
  EXPECT_GE(*since, before) << "idle from the last detach";
  // Its allocation ended: its clock is gone (a new look starts one afresh).
  f.relay.Forget("9.0");
  const auto later = before + std::chrono::hours(2);
  EXPECT_EQ(f.relay.IdleSince("9.0", later), later);
}

}  // namespace
}  // namespace terminal_relay_test
}  // namespace ring
