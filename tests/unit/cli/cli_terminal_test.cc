// The CLI's terminal client (cli/terminal_client.h) against a WebSocket
// server in the test playing the master's terminal endpoint: the client
// sends its token and its terminal's size, passes typed bytes as binary
// frames, writes the shell's frames to its output, sends a resize when its
// window changes, and ends on the master's "closed" or on Ctrl-].
#include <pty.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <utility>  // before Asio

#include <gtest/gtest.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <future>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli/terminal_client.h"

namespace ring::cli {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using tcp = net::ip::tcp;

// A pseudo-terminal standing for the user's: the client gets its slave side
// as stdin and stdout, the test types and reads on the master side.
struct Pty {
  int master = -1;
  int slave = -1;
  Pty() {
    winsize ws{};
    ws.ws_row = 33;
    ws.ws_col = 111;
    EXPECT_EQ(::openpty(&master, &slave, nullptr, nullptr, &ws), 0);
  }
  ~Pty() {
    ::close(master);
    ::close(slave);
  }
  std::string ReadSome() {
    char buf[256];
    const ssize_t n = ::read(master, buf, sizeof buf);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
  }
};

// What the server saw.
struct Seen {
  std::string target, authorization;
  std::vector<std::string> binary, text;
};

TEST(CliTerminal, RelaysBothWaysResizesAndEndsWhenTheMasterSaysSo) {
  net::io_context server_io;
  tcp::acceptor acceptor(server_io, {net::ip::make_address("127.0.0.1"), 0});
  const int port = acceptor.local_endpoint().port();
  Pty pty;
  std::promise<Seen> seen_promise;
  std::thread server([&] {
    Seen seen;
    tcp::socket socket(server_io);
    acceptor.accept(socket);
    beast::flat_buffer buffer;
    beast::http::request<beast::http::string_body> req;
    beast::http::read(socket, buffer, req);
    seen.target = std::string(req.target());
    seen.authorization = std::string(req[beast::http::field::authorization]);
    websocket::stream<tcp::socket> ws(std::move(socket));
    ws.accept(req);
    ws.binary(true);
    ws.write(net::buffer(std::string("ring$ ")));
    // Three frames from the client: what was typed, the resize, more typing.
    while (seen.binary.size() + seen.text.size() < 3) {
      beast::flat_buffer frame;
      ws.read(frame);
      (ws.got_binary() ? seen.binary : seen.text).push_back(beast::buffers_to_string(frame.data()));
      if (seen.binary.size() == 1 && seen.text.empty()) {
        winsize ws_size{};
        ws_size.ws_row = 50;
        ws_size.ws_col = 132;
        ::ioctl(pty.master, TIOCSWINSZ, &ws_size);
        // The kernel tells the terminal's foreground process group; this
        // process is not in the pty's session, so it tells itself.
        ::kill(::getpid(), SIGWINCH);
      }
    }
    ws.text(true);
    ws.write(net::buffer(std::string(R"({"type":"closed","reason":"the shell exited"})")));
    ws.close(websocket::close_code::normal);
    seen_promise.set_value(seen);
  });

  auto ended = std::async(std::launch::async, [&] {
    return RunTerminal(
        {*Url::Parse("http://127.0.0.1:" + std::to_string(port)), "/api/v1/shells/4/terminal", "tok-1", ""},
        pty.slave, pty.slave);
  });
  std::string shown;
  while (shown.find("ring$ ") == std::string::npos) shown += pty.ReadSome();
  ASSERT_EQ(::write(pty.master, "ls\x03", 3), 3);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ASSERT_EQ(::write(pty.master, "x", 1), 1);
  const TerminalResult result = ended.get();
  server.join();
  const Seen seen = seen_promise.get_future().get();

  EXPECT_EQ(seen.target, "/api/v1/shells/4/terminal?rows=33&cols=111");
  EXPECT_EQ(seen.authorization, "Bearer tok-1");
  ASSERT_EQ(seen.binary.size(), 2u);
  EXPECT_EQ(seen.binary[0], "ls\x03") << "raw mode: Ctrl-C is a byte for the shell";
  EXPECT_EQ(seen.binary[1], "x");
  ASSERT_EQ(seen.text.size(), 1u);
  const auto resize = nlohmann::json::parse(seen.text[0]);
  EXPECT_EQ(resize.value("type", ""), "resize");
  EXPECT_EQ(resize.value("rows", 0), 50);
  EXPECT_EQ(resize.value("cols", 0), 132);
  EXPECT_EQ(result.end, TerminalEnd::kClosed);
  EXPECT_EQ(result.reason, "the shell exited");
}

TEST(CliTerminal, CtrlBracketDetachesAndARefusalSaysWhy) {
  net::io_context server_io;
  tcp::acceptor acceptor(server_io, {net::ip::make_address("127.0.0.1"), 0});
  const int port = acceptor.local_endpoint().port();
  Pty pty;
  std::thread server([&] {
    for (int i = 0; i < 2; ++i) {
      tcp::socket socket(server_io);
      acceptor.accept(socket);
      beast::flat_buffer buffer;
      beast::http::request<beast::http::string_body> req;
      beast::http::read(socket, buffer, req);
      if (i == 1) {  // the second: refused, as the master refuses another user
        beast::http::response<beast::http::string_body> res{beast::http::status::forbidden, 11};
        res.body() = R"({"error":{"code":"PERMISSION_DENIED","message":"shell 4 is carol's"}})";
        res.prepare_payload();
        beast::http::write(socket, res);
        return;
      }
      websocket::stream<tcp::socket> ws(std::move(socket));
      ws.accept(req);
      beast::flat_buffer frame;
      beast::error_code ec;
      while (!ec) ws.read(frame, ec);  // until the client closes
    }
  });
  const Url url = *Url::Parse("http://127.0.0.1:" + std::to_string(port));
  auto detached = std::async(std::launch::async, [&] {
    return RunTerminal({url, "/api/v1/shells/4/terminal", "tok", ""}, pty.slave, pty.slave);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ASSERT_EQ(::write(pty.master, "\x1d", 1), 1);
  EXPECT_EQ(detached.get().end, TerminalEnd::kDetached);
  const TerminalResult refused =
      RunTerminal({url, "/api/v1/shells/4/terminal", "tok", ""}, pty.slave, pty.slave);
  server.join();
  EXPECT_EQ(refused.end, TerminalEnd::kFailed);
  EXPECT_NE(refused.reason.find("HTTP 403"), std::string::npos) << refused.reason;
  EXPECT_NE(refused.reason.find("shell 4 is carol's"), std::string::npos) << refused.reason;
}

}  // namespace
}  // namespace ring::cli
