// Our agents' resource manager carries task terminals: messages to an
// agent's live connection, an agent's terminal output to the relay, which
// answers whether the session is that agent's, output for a session the
// master no longer has answered with a close, and a departed agent's
// terminals ended.
#include <gtest/gtest.h>

#include "master/rm/agentrm/agent_rm.h"
#include "master/store/memory_store.h"
#include "tests/unit/lifecycle/lifecycle_test_fixture.h"

namespace ring::testing {
namespace {

class NoEvents : public RmEvents {
 public:
  void OnRankState(const std::string&, const proto::StateChange&) override {}
  void OnLogs(const std::string&, proto::LogBatch) override {}
  void OnNodeConnected(const std::string&, const std::vector<proto::RunningProcess>&, SteadyTime) override {}
  void OnNodeLost(const std::string&) override {}
  void OnAllocationLost(const std::string&, const std::string&) override {}
  void OnAllocationNeverStarted(const std::string&, const std::string&) override {}
  void OnAllocationPreempted(const std::string&, const std::string&) override {}
  void OnNodeEvicted(const std::string&) override {}
  void OnCapacityChanged() override {}
};

TEST(AgentRmTerminals, RouteToAndFromTheAgentsConnection) {
  MemoryStore store;
  NoEvents events;
  std::vector<std::pair<std::string, proto::Message>> relayed;
  std::vector<std::string> gone;
  AgentRmOptions options;
  options.terminal_message = [&](const std::string& agent, const proto::Message& m) {
    relayed.emplace_back(agent, m);
    const auto* output = std::get_if<proto::TerminalOutput>(&m);
    return !output || output->session == "mine";
  };
  options.terminals_gone = [&](const std::string& agent) { gone.push_back(agent); };
  AgentRm rm(store, options, events);
  const auto now = std::chrono::steady_clock::now();
  EXPECT_EQ(rm.SendToAgent("a1", proto::TerminalClose{"s"}).code(), ErrorCode::kUnavailable);

  auto channel = std::make_shared<RecordingChannel>();
  proto::Hello hello{"a1", "default", "10.0.0.1", "test", {{0, "cpu", ""}}, {}};
  rm.OnHello("a1", hello, channel, now);
  ASSERT_TRUE(rm.SendToAgent("a1", proto::TerminalOpen{"4.0", 0, "mine", 24, 80}).ok());
  ASSERT_EQ(channel->Of<proto::TerminalOpen>().size(), 1u);
  EXPECT_EQ(channel->Of<proto::TerminalOpen>()[0].session, "mine");

  rm.OnMessage("a1", proto::TerminalOutput{"mine", "$ "}, now);
  rm.OnMessage("a1", proto::TerminalClosed{"mine", "the shell exited"}, now);
  ASSERT_EQ(relayed.size(), 2u);
  EXPECT_EQ(relayed[0].first, "a1");
  EXPECT_TRUE(channel->Of<proto::TerminalClose>().empty());

  rm.OnMessage("a1", proto::TerminalOutput{"stale", "x"}, now);
  ASSERT_EQ(channel->Of<proto::TerminalClose>().size(), 1u) << "the agent is told to stop sending it";
  EXPECT_EQ(channel->Of<proto::TerminalClose>()[0].session, "stale");

  rm.OnDisconnected("a1", channel.get(), now);
  EXPECT_EQ(gone, std::vector<std::string>{"a1"});
  EXPECT_EQ(rm.SendToAgent("a1", proto::TerminalClose{"s"}).code(), ErrorCode::kUnavailable);
}

}  // namespace
}  // namespace ring::testing
