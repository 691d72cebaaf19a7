#include "cli/terminal_client.h"

#include <signal.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <utility>  // before Asio (std::exchange with g++ 12)

#include <deque>
#include <memory>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <nlohmann/json.hpp>

#include "common/tls_client.h"

namespace ring::cli {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;

// The local terminal in raw mode while it lives (when stdin is one).
class RawMode {
 public:
  explicit RawMode(int fd) : fd_(fd) {
    if (!::isatty(fd_) || ::tcgetattr(fd_, &saved_) != 0) return;
    termios raw = saved_;
    ::cfmakeraw(&raw);
    active_ = ::tcsetattr(fd_, TCSANOW, &raw) == 0;
  }
  ~RawMode() {
    if (active_) ::tcsetattr(fd_, TCSANOW, &saved_);
  }
  RawMode(const RawMode&) = delete;
  RawMode& operator=(const RawMode&) = delete;

 private:
  const int fd_;
  termios saved_{};
  bool active_ = false;
};

struct Size {
  int rows = 24;
  int cols = 80;
};

Size LocalSize(int in, int out) {
  winsize ws{};
  for (int fd : {out, in})
    if (::ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0) return {ws.ws_row, ws.ws_col};
  return {};
}

std::string ResizeFrame(Size size) {
  return nlohmann::json{{"type", "resize"}, {"rows", size.rows}, {"cols", size.cols}}.dump();
}

// One session: everything runs on the io_context's one thread.
class Session {
 public:
  Session(net::io_context& io, websocket::stream<AnyStream>& ws, int in, int out)
      : io_(io), ws_(ws), in_fd_(in), out_fd_(out), input_(io, ::dup(in)), winch_(io, SIGWINCH) {}

  void Start() {
    ReadMaster();
    ReadInput();
    WatchSize();
  }
  TerminalResult result() const { return result_; }

 private:
  void Finish(TerminalEnd end, std::string reason) {
    if (finished_) return;
    finished_ = true;
    result_ = {end, std::move(reason)};
    boost::system::error_code ec;
    input_.cancel(ec);
    winch_.cancel(ec);
    if (end == TerminalEnd::kDetached) {
      ws_.async_close(websocket::close_code::normal, [this](beast::error_code) { io_.stop(); });
    } else {
      io_.stop();
    }
  }

  void Send(bool text, std::string frame) {
    queue_.emplace_back(text, std::move(frame));
    Pump();
  }
  void Pump() {
    if (writing_ || queue_.empty() || finished_) return;
    writing_ = true;
    ws_.text(queue_.front().first);
    ws_.async_write(net::buffer(queue_.front().second), [this](beast::error_code ec, size_t) {
      writing_ = false;
      queue_.pop_front();
      if (ec) return Finish(TerminalEnd::kFailed, "the connection broke: " + ec.message());
      Pump();
    });
  }

  void ReadMaster() {
    ws_.async_read(buffer_, [this](beast::error_code ec, size_t) {
      if (ec) {
        if (ec == websocket::error::closed)
          return Finish(TerminalEnd::kClosed, closed_reason_.empty() ? "the session ended" : closed_reason_);
        return Finish(closed_reason_.empty() ? TerminalEnd::kFailed : TerminalEnd::kClosed,
                      closed_reason_.empty() ? "the connection broke: " + ec.message() : closed_reason_);
      }
      const std::string data = beast::buffers_to_string(buffer_.data());
      buffer_.consume(buffer_.size());
      if (ws_.got_binary()) {
        for (size_t done = 0; done < data.size();) {
          const ssize_t n = ::write(out_fd_, data.data() + done, data.size() - done);
          if (n <= 0) break;
          done += static_cast<size_t>(n);
        }
      } else {
        const auto control = nlohmann::json::parse(data, nullptr, false);
        if (control.is_object() && control.value("type", "") == "closed")
          closed_reason_ = control.value("reason", "the session ended");
      }
      ReadMaster();
    });
  }

  void ReadInput() {
    input_.async_read_some(net::buffer(in_), [this](boost::system::error_code ec, size_t n) {
      if (finished_) return;
      if (ec) return Finish(TerminalEnd::kDetached, "");  // end of stdin
      std::string typed(in_, n);
      if (const size_t key = typed.find(kDetachKey); key != std::string::npos) {
        if (key > 0) Send(false, typed.substr(0, key));
        return Finish(TerminalEnd::kDetached, "");
      }
      Send(false, std::move(typed));
      ReadInput();
    });
  }

  void WatchSize() {
    winch_.async_wait([this](boost::system::error_code ec, int) {
      if (ec || finished_) return;
      Send(true, ResizeFrame(LocalSize(in_fd_, out_fd_)));
      WatchSize();
    });
  }

  net::io_context& io_;
  websocket::stream<AnyStream>& ws_;
  const int in_fd_;
  const int out_fd_;
  net::posix::stream_descriptor input_;
  net::signal_set winch_;
  beast::flat_buffer buffer_;
  char in_[4096];
  std::deque<std::pair<bool, std::string>> queue_;
  bool writing_ = false;
  bool finished_ = false;
  std::string closed_reason_;
  TerminalResult result_;
};

}  // namespace

TerminalResult RunTerminal(const TerminalTarget& target, int in, int out) {
  net::io_context io;
  const bool secure = target.master.scheme == "https";
  std::shared_ptr<net::ssl::context> tls;
  if (secure) {
    auto made = MakeClientTlsContext(target.ca_file);
    if (!made.ok()) return {TerminalEnd::kFailed, made.status().message()};
    tls = *made;
  }
  beast::tcp_stream tcp(io);
  net::ip::tcp::resolver resolver(io);
  boost::system::error_code ec;
  auto endpoints = resolver.resolve(target.master.host, target.master.port, ec);
  if (ec) return {TerminalEnd::kFailed, "cannot resolve " + target.master.host + ": " + ec.message()};
  tcp.expires_after(std::chrono::seconds(30));
  tcp.connect(endpoints, ec);
  if (ec)
    return {TerminalEnd::kFailed, "cannot connect to " + target.master.ToString() + ": " + ec.message()};
  tcp.expires_never();
  std::unique_ptr<websocket::stream<AnyStream>> ws;
  if (secure) {
    TlsStream stream(std::move(tcp), *tls);
    if (Status s = PrepareClientTls(stream, target.master.host); !s.ok())
      return {TerminalEnd::kFailed, s.message()};
    stream.handshake(net::ssl::stream_base::client, ec);
    if (ec)
      return {TerminalEnd::kFailed, ClientHandshakeError(stream, ec, target.master.ToString()).message()};
    ws = std::make_unique<websocket::stream<AnyStream>>(AnyStream(std::move(stream)));
  } else {
    ws = std::make_unique<websocket::stream<AnyStream>>(AnyStream(std::move(tcp)));
  }
  ws->set_option(websocket::stream_base::decorator([token = target.token](websocket::request_type& req) {
    req.set(beast::http::field::user_agent, "ring");
    if (!token.empty()) req.set(beast::http::field::authorization, "Bearer " + token);
  }));
  const Size size = LocalSize(in, out);
  websocket::response_type response;
  // AnyStream is asynchronous only: the handshake runs the io_context alone.
  ws->async_handshake(response, target.master.host + ":" + target.master.port,
                      target.master.path + target.path + "?rows=" + std::to_string(size.rows) +
                          "&cols=" + std::to_string(size.cols),
                      [&ec](beast::error_code e) { ec = e; });
  io.run();
  io.restart();
  if (ec) {
    if (ec == websocket::error::upgrade_declined) {
      std::string message = response.body();
      const auto body = nlohmann::json::parse(message, nullptr, false);
      if (body.is_object() && body.contains("error") && body["error"].is_object())
        message = body["error"].value("message", message);
      return {TerminalEnd::kFailed, "the master refused the terminal (HTTP " +
                                        std::to_string(response.result_int()) + "): " + message};
    }
    return {TerminalEnd::kFailed, "WebSocket upgrade failed: " + ec.message()};
  }
  ws->binary(true);
  ws->set_option(websocket::stream_base::timeout{std::chrono::seconds(30), std::chrono::seconds(60), true});
  RawMode raw(in);
  Session session(io, *ws, in, out);
  session.Start();
  io.run();
  return session.result();
}

}  // namespace ring::cli
