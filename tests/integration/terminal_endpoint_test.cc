// The master's terminal endpoint (master/http/terminal_ws_session.h) on a
// real HttpServer, with the CLI's real client (cli/terminal_client.h) on a
// real pseudo-terminal, and a relay whose agent the test plays: the
// scrollback first, typing echoed back, a resize passed on, the shell's
// exit ending the client with its reason, a detach closing the session
// only, and a refused admission answered before any upgrade.
#include <pty.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <utility>  // before Asio

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <future>
#include <mutex>
#include <thread>

#include "cli/terminal_client.h"
#include "master/http/http_server.h"
#include "master/http/router.h"
#include "master/http/terminal_ws_session.h"
#include "master/http/ws_upgrade.h"
#include "master/interactive/terminal_relay.h"
#include "tests/support/wait_until.h"

namespace ring {
namespace terminal_endpoint_test {
namespace {

using namespace std::chrono_literals;

class NoAgents : public AgentChannelAcceptor {
 public:
  Result<std::string> Admit(const boost::beast::http::request<boost::beast::http::string_body>&,
                            const std::string&) override {
    return Status(ErrorCode::kUnauthenticated, "no agents here");
  }
  void Accept(AnyStream, boost::beast::http::request<boost::beast::http::string_body>, std::string) override {
  }
};

struct Pty {
  int master = -1;
  int slave = -1;
  Pty() {
    winsize ws{};
    ws.ws_row = 30;
    ws.ws_col = 90;
    EXPECT_EQ(::openpty(&master, &slave, nullptr, nullptr, &ws), 0);
  }
  ~Pty() {
    ::close(master);
    ::close(slave);
  }
  // Reads until `needle` shows (or 10 s).
  bool WaitFor(const std::string& needle) {
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (shown.find(needle) == std::string::npos && std::chrono::steady_clock::now() < deadline) {
      pollfd p{master, POLLIN, 0};
      if (::poll(&p, 1, 100) > 0) {
        char buf[256];
        const ssize_t n = ::read(master, buf, sizeof buf);
        if (n > 0) shown.append(buf, static_cast<size_t>(n));
      }
    }
    return shown.find(needle) != std::string::npos;
  }
  std::string shown;
};

class TerminalEndpoint : public ::testing::Test {
 protected:
  void SetUp() override {
    acceptor_ = std::make_unique<TerminalWsAcceptor>(
        relay_, [](std::string_view target) { return target.rfind("/api/v1/shells/", 0) == 0; },
        [this](const boost::beast::http::request<boost::beast::http::string_body>& req,
               const std::string&) -> Result<TerminalAdmission> {
          const std::string auth(req[boost::beast::http::field::authorization]);
          if (auth == "Bearer eve") return Status(ErrorCode::kPermissionDenied, "shell 4 is carol's");
          if (auth != "Bearer carol") return Status(ErrorCode::kUnauthenticated, "sign in");
          return TerminalAdmission{"carol", "agent-1", "4.0", 0, 24, 80};
        });
    server_ = std::make_unique<HttpServer>(io_, HttpServerOptions{.port = 0}, router_, agents_);
    server_->SetTerminals(acceptor_.get());
    auto port = server_->Start();
    ASSERT_TRUE(port.ok()) << port.status().message();
    url_ = *Url::Parse("http://127.0.0.1:" + std::to_string(*port));
    thread_ = std::thread([this] { io_.run(); });
  }
  void TearDown() override {
    server_->Stop();
    io_.stop();
    thread_.join();
  }

  // The agent: answers an open with its scrollback, echoes typing, and
  // ends the session when "exit" is typed.
  Status Agent(const std::string& agent_id, const proto::Message& m) {
    std::lock_guard lock(mu_);
    messages_.push_back(m);
    if (const auto* open = std::get_if<proto::TerminalOpen>(&m)) {
      rows_ = open->rows;
      std::thread([this, agent_id, session = open->session] {
        relay_.FromAgent(agent_id, proto::TerminalOutput{session, "ring$ "});
      }).detach();
    } else if (const auto* input = std::get_if<proto::TerminalInput>(&m)) {
      const bool exit = input->data.find("exit") != std::string::npos;
      std::thread([this, agent_id, session = input->session, data = input->data, exit] {
        if (exit)
          relay_.FromAgent(agent_id, proto::TerminalClosed{session, "the shell exited"});
        else
          relay_.FromAgent(agent_id, proto::TerminalOutput{session, "echo:" + data});
      }).detach();
    }
    return Status::Ok();
  }
  template <typename M>
  std::vector<M> Sent() {
    std::lock_guard lock(mu_);
    std::vector<M> out;
    for (const auto& m : messages_)
      if (const auto* x = std::get_if<M>(&m)) out.push_back(*x);
    return out;
  }

  std::mutex mu_;
  std::vector<proto::Message> messages_;
  int rows_ = 0;
  TerminalRelay relay_{[this](const std::string& agent, const proto::Message& m) { return Agent(agent, m); }};
  boost::asio::io_context io_;
  Router router_;
  NoAgents agents_;
  std::unique_ptr<TerminalWsAcceptor> acceptor_;
  std::unique_ptr<HttpServer> server_;
  std::thread thread_;
  Url url_;
};

TEST_F(TerminalEndpoint, TheCliTypesIntoTheAgentsTerminalUntilTheShellExits) {
  Pty pty;
  auto ended = std::async(std::launch::async, [&] {
    return cli::RunTerminal({url_, "/api/v1/shells/4/terminal", "carol", ""}, pty.slave, pty.slave);
  });
  ASSERT_TRUE(pty.WaitFor("ring$ ")) << pty.shown;
  EXPECT_EQ(rows_, 30) << "the client's size reaches the agent at open";
  ASSERT_EQ(::write(pty.master, "ls\x03", 3), 3);
  ASSERT_TRUE(pty.WaitFor("echo:ls\x03")) << pty.shown;

  winsize ws{};
  ws.ws_row = 50;
  ws.ws_col = 132;
  ::ioctl(pty.master, TIOCSWINSZ, &ws);
  ::kill(::getpid(), SIGWINCH);  // the test is not in the pty's session: it tells itself
  ASSERT_TRUE(testing::WaitUntil([&] { return !Sent<proto::TerminalResize>().empty(); }));
  EXPECT_EQ(Sent<proto::TerminalResize>()[0].cols, 132);

  ASSERT_EQ(::write(pty.master, "exit\r", 5), 5);
  const auto result = ended.get();
  EXPECT_EQ(result.end, cli::TerminalEnd::kClosed);
  EXPECT_EQ(result.reason, "the shell exited");
  EXPECT_TRUE(testing::WaitUntil([&] { return relay_.sessions() == 0; }));
}

TEST_F(TerminalEndpoint, ADetachClosesTheSessionOnlyAndRefusalsComeBeforeTheUpgrade) {
  Pty pty;
  auto ended = std::async(std::launch::async, [&] {
    return cli::RunTerminal({url_, "/api/v1/shells/4/terminal", "carol", ""}, pty.slave, pty.slave);
  });
  ASSERT_TRUE(pty.WaitFor("ring$ "));
  ASSERT_EQ(::write(pty.master, "\x1d", 1), 1);
  EXPECT_EQ(ended.get().end, cli::TerminalEnd::kDetached);
  ASSERT_TRUE(testing::WaitUntil([&] { return !Sent<proto::TerminalClose>().empty(); }));
  EXPECT_EQ(relay_.sessions(), 0u);

  const auto eve = cli::RunTerminal({url_, "/api/v1/shells/4/terminal", "eve", ""}, pty.slave, pty.slave);
  EXPECT_EQ(eve.end, cli::TerminalEnd::kFailed);
  EXPECT_NE(eve.reason.find("HTTP 403"), std::string::npos) << eve.reason;
  EXPECT_NE(eve.reason.find("shell 4 is carol's"), std::string::npos) << eve.reason;
  const auto nobody = cli::RunTerminal({url_, "/api/v1/shells/4/terminal", "", ""}, pty.slave, pty.slave);
  EXPECT_NE(nobody.reason.find("HTTP 401"), std::string::npos) << nobody.reason;
  EXPECT_EQ(Sent<proto::TerminalOpen>().size(), 1u) << "a refused client opens nothing";
}

}  // namespace
}  // namespace terminal_endpoint_test
}  // namespace ring
