// The agent's terminals (terminal_hub.h) and the messages that drive them:
// sessions opened by the master see the scrollback first and then what the
// terminal shows, type into it and resize it, end when the rank does, and
// a shell's rank is launched in a terminal whose output is no log.
#include <gtest/gtest.h>

#include "agent/fake_message_sink.h"
#include "agent/fake_process_launcher.h"
#include "agent/terminal_hub.h"

namespace ring {
namespace {

std::vector<proto::TerminalOutput> OutputsOf(const FakeMessageSink& sink, const std::string& session) {
  std::vector<proto::TerminalOutput> out;
  for (const auto& m : sink.messages())
    if (auto* o = std::get_if<proto::TerminalOutput>(&m); o && o->session == session) out.push_back(*o);
  return out;
}

std::vector<proto::TerminalClosed> ClosedOf(const FakeMessageSink& sink) {
  std::vector<proto::TerminalClosed> out;
  for (const auto& m : sink.messages())
    if (auto* c = std::get_if<proto::TerminalClosed>(&m)) out.push_back(*c);
  return out;
}

int64_t LaunchWithTerminal(FakeProcessLauncher& launcher) {
  ProcessSpec spec;
  spec.argv = {"/bin/bash", "-l"};
  spec.terminal = TerminalSize{};
  return launcher.Launch(spec, {})->pid;
}

TEST(AgentTerminalHub, SessionsSeeTheScrollbackThenTypeResizeAndEndWithTheRank) {
  FakeProcessLauncher launcher;
  FakeMessageSink sink;
  TerminalHub hub(launcher, sink);
  const int64_t pid = LaunchWithTerminal(launcher);
  hub.Add("a1", 0, pid);
  hub.Output("a1", 0, "welcome\r\n$ ");
  EXPECT_TRUE(sink.messages().empty()) << "no one is attached yet";

  hub.Handle(proto::TerminalOpen{"a1", 0, "s1", 40, 120});
  auto first = OutputsOf(sink, "s1");
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].data, "welcome\r\n$ ");
  ASSERT_EQ(launcher.sizes(pid).size(), 1u);
  EXPECT_EQ(launcher.sizes(pid)[0].rows, 40);
  EXPECT_EQ(launcher.sizes(pid)[0].cols, 120);

  hub.Handle(proto::TerminalInput{"s1", "ls\n"});
  hub.Handle(proto::TerminalInput{"s1", std::string("\x03", 1)});
  EXPECT_EQ(launcher.typed(pid), "ls\n\x03");
  hub.Handle(proto::TerminalResize{"s1", 50, 132});
  EXPECT_EQ(launcher.sizes(pid).back().cols, 132);

  // A second client, then the first leaves: the shell runs on.
  hub.Handle(proto::TerminalOpen{"a1", 0, "s2", 24, 80});
  hub.Output("a1", 0, "x");
  EXPECT_EQ(OutputsOf(sink, "s1").back().data, "x");
  EXPECT_EQ(OutputsOf(sink, "s2").back().data, "x");
  hub.Handle(proto::TerminalClose{"s1"});
  hub.Output("a1", 0, "y");
  EXPECT_EQ(OutputsOf(sink, "s1").back().data, "x");
  EXPECT_EQ(OutputsOf(sink, "s2").back().data, "y");
  EXPECT_EQ(hub.sessions(), 1u);

  // A closed session types nothing more; the rank's end closes the rest.
  hub.Handle(proto::TerminalInput{"s1", "rm -rf ~\n"});
  EXPECT_EQ(launcher.typed(pid), "ls\n\x03");
  hub.Remove("a1", 0);
  auto closed = ClosedOf(sink);
  ASSERT_EQ(closed.size(), 2u);
  EXPECT_EQ(closed[0].session, "s1");
  EXPECT_EQ(closed[0].reason, "no such terminal session");
  EXPECT_EQ(closed[1].session, "s2");
  EXPECT_EQ(closed[1].reason, "the shell exited");
  EXPECT_EQ(hub.sessions(), 0u);
}

TEST(AgentTerminalHub, RefusesUnknownTerminalsAndKeepsTheLast64KiB) {
  FakeProcessLauncher launcher;
  FakeMessageSink sink;
  TerminalHub hub(launcher, sink);
  hub.Handle(proto::TerminalOpen{"nope", 0, "s1", 24, 80});
  ASSERT_EQ(ClosedOf(sink).size(), 1u);
  EXPECT_NE(ClosedOf(sink)[0].reason.find("no terminal of allocation nope"), std::string::npos);

  const int64_t pid = LaunchWithTerminal(launcher);
  hub.Add("a1", 0, pid);
  hub.Output("a1", 0, std::string(TerminalHub::kScrollback, 'a'));
  hub.Output("a1", 0, "tail");
  hub.Handle(proto::TerminalOpen{"a1", 0, "s2", 24, 80});
  auto replay = OutputsOf(sink, "s2");
  ASSERT_EQ(replay.size(), 1u);
  EXPECT_EQ(replay[0].data.size(), TerminalHub::kScrollback);
  EXPECT_EQ(replay[0].data.substr(replay[0].data.size() - 4), "tail");
  hub.Handle(proto::TerminalOpen{"a1", 0, "s2", 24, 80});
  EXPECT_EQ(ClosedOf(sink).back().reason, "the session is open already");
}

TEST(AgentTerminalProtocol, MessagesRoundTripWithAnyBytes) {
  const std::string bytes("\x00\x03\xff\x1b[0m\r\n", 8);
  auto decoded = proto::Decode(proto::Encode(proto::TerminalOutput{"s1", bytes}));
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(std::get<proto::TerminalOutput>(*decoded).data, bytes);
  auto open = proto::Decode(proto::Encode(proto::TerminalOpen{"7.0", 1, "s", 50, 200}));
  ASSERT_TRUE(open.ok());
  EXPECT_EQ(std::get<proto::TerminalOpen>(*open).cols, 200);
  EXPECT_FALSE(proto::Decode(R"({"type":"terminal_resize","session":"s","rows":0,"cols":80})").ok());
  EXPECT_FALSE(proto::Decode(R"({"type":"terminal_input","session":"s","data":"%%%"})").ok());
  EXPECT_FALSE(proto::Decode(R"({"type":"terminal_input","session":"","data":""})").ok());
  proto::Start start;
  start.terminal = true;
  auto round = proto::Decode(proto::Encode(start));
  ASSERT_TRUE(round.ok()) << round.status().message();
  EXPECT_TRUE(std::get<proto::Start>(*round).terminal);
}

}  // namespace
}  // namespace ring
