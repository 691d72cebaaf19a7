#pragma once
// A fake master for agent tests, on 127.0.0.1:0 with its own thread.
#include <utility>  // before Asio (std::exchange with g++ 12)

#include <atomic>
#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>

#include "common/agent_protocol.h"
#include "tests/support/wait_until.h"

namespace ring::agent_test {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using tcp = net::ip::tcp;

using ring::testing::WaitUntil;

// A fake master: accepts agent WebSocket connections (the latest is current), answers hello with
// welcome, records everything it receives, and can drop or refuse
// connections and push messages, and serves files over plain HTTP. Runs on
// its own thread and io_context.
class TestMaster {
 public:
  struct Frame {
    int connection = 0;
    proto::Message message;
  };

  TestMaster() : acceptor_(io_, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0)) {
    net::co_spawn(io_, Accept(), net::detached);
    thread_ = std::thread([this] { io_.run(); });
  }
  ~TestMaster() {
    net::post(io_, [this] {
      beast::error_code ec;
      acceptor_.close(ec);
      if (current_) beast::get_lowest_layer(*current_->ws).close(ec);
    });
    work_.reset();
    io_.stop();
    thread_.join();
  }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(acceptor_.local_endpoint().port()); }
  void set_refuse(bool refuse) { refuse_ = refuse; }

  // Closes the current connection without a close frame.
  void Drop() {
    net::post(io_, [this] {
      beast::error_code ec;
      if (current_) beast::get_lowest_layer(*current_->ws).close(ec);
    });
  }
  // Sends a frame on the current connection, after its welcome.
  void Push(const proto::Message& message) { PushRaw(proto::Encode(message)); }
  void PushRaw(std::string text) {
    net::post(io_, [this, text = std::move(text)] {
      if (!current_) return;
      if (current_->welcomed) {
        Enqueue(current_, std::move(text));
      } else {
        current_->held.push_back(std::move(text));
      }
    });
  }

  std::vector<Frame> frames() {
    std::lock_guard lock(mutex_);
    return frames_;
  }
  template <typename T>
  std::vector<T> Received() {
    std::vector<T> out;
    for (const auto& f : frames())
      if (auto* m = std::get_if<T>(&f.message)) out.push_back(*m);
    return out;
  }
  int CountHeartbeats(int connection) {
    int n = 0;
    for (const auto& f : frames())
      n += f.connection == connection && std::holds_alternative<proto::Heartbeat>(f.message);
    return n;
  }
  int connections() const { return connections_.load(); }
  int refused() const { return refused_.load(); }
  std::vector<std::chrono::steady_clock::time_point> refused_at() {
    std::lock_guard lock(mutex_);
    return refused_at_;
  }
  std::string authorization() {
    std::lock_guard lock(mutex_);
    return authorization_;
  }
  std::string target() {
    std::lock_guard lock(mutex_);
    return target_;
  }
  bool close_frame_seen() const { return close_frame_seen_.load(); }
  // Serves `body` at `path` to GETs that present `token` as Bearer.
  void ServeBody(const std::string& path, const std::string& token, std::string body) {
    std::lock_guard lock(mutex_);
    files_[path] = {token, std::move(body)};
  }
  std::vector<std::string> file_requests() {
    std::lock_guard lock(mutex_);
    return file_requests_;
  }

 private:
  net::awaitable<void> Accept() {
    while (acceptor_.is_open()) {
      beast::error_code ec;
      tcp::socket socket(io_);
      co_await acceptor_.async_accept(socket, net::redirect_error(net::use_awaitable, ec));
      if (ec) co_return;
      net::co_spawn(io_, Serve(std::move(socket)), net::detached);
    }
  }

  net::awaitable<void> Serve(tcp::socket socket) {
    beast::error_code ec;
    beast::flat_buffer buffer;
    http::request<http::string_body> request;
    co_await http::async_read(socket, buffer, request, net::redirect_error(net::use_awaitable, ec));
    if (ec) co_return;
    if (!websocket::is_upgrade(request)) {
      co_await ServeFile(socket, request);
      co_return;
    }
    {
      std::lock_guard lock(mutex_);
      authorization_ = std::string(request[http::field::authorization]);
      target_ = std::string(request.target());
    }
    if (refuse_) {
      {
        std::lock_guard lock(mutex_);
        refused_at_.push_back(std::chrono::steady_clock::now());
      }
      ++refused_;
      http::response<http::string_body> response{http::status::service_unavailable, 11};
      response.body() = "not now";
      response.prepare_payload();
      co_await http::async_write(socket, response, net::redirect_error(net::use_awaitable, ec));
      co_return;
    }
    auto ws = std::make_shared<websocket::stream<tcp::socket>>(std::move(socket));
    co_await ws->async_accept(request, net::redirect_error(net::use_awaitable, ec));
    if (ec) co_return;
    auto conn = std::make_shared<Connection>();
    conn->ws = ws;
    int connection = ++connections_;
    current_ = conn;
    while (true) {
      buffer.clear();
      co_await ws->async_read(buffer, net::redirect_error(net::use_awaitable, ec));
      if (ec) {
        if (ec == websocket::error::closed) close_frame_seen_ = true;
        break;
      }
      auto message = proto::Decode(beast::buffers_to_string(buffer.data()));
      if (!message.ok()) continue;
      {
        std::lock_guard lock(mutex_);
        frames_.push_back({connection, *message});
      }
      if (!conn->welcomed && std::holds_alternative<proto::Hello>(*message)) {
        conn->welcomed = true;
        Enqueue(conn, proto::Encode(proto::Welcome{30, 1000}));
        for (auto& held : conn->held) Enqueue(conn, std::move(held));
        conn->held.clear();
      }
    }
    if (current_ == conn) current_.reset();
  }

  // One writer per connection, so frames never interleave (io_ thread).
  struct Connection {
    std::shared_ptr<websocket::stream<tcp::socket>> ws;
    std::deque<std::string> outbox;
    std::vector<std::string> held;  // pushed before the welcome
    bool writing = false;
    bool welcomed = false;
  };
  void Enqueue(const std::shared_ptr<Connection>& conn, std::string text) {
    conn->outbox.push_back(std::move(text));
    if (conn->writing) return;
    conn->writing = true;
    net::co_spawn(io_, Flush(conn), net::detached);
  }
  net::awaitable<void> Flush(std::shared_ptr<Connection> conn) {
    beast::error_code ec;
    while (!conn->outbox.empty()) {
      std::string text = conn->outbox.front();
      co_await conn->ws->async_write(net::buffer(text), net::redirect_error(net::use_awaitable, ec));
      conn->outbox.pop_front();
      if (ec) conn->outbox.clear();
    }
    conn->writing = false;
  }

  // Plain HTTP: GET of a path given to ServeBody, with its bearer token checked.
  net::awaitable<void> ServeFile(tcp::socket& socket, const http::request<http::string_body>& request) {
    http::response<http::string_body> response{http::status::not_found, 11};
    {
      std::lock_guard lock(mutex_);
      file_requests_.push_back(std::string(request.target()));
      auto it = files_.find(std::string(request.target()));
      if (it != files_.end()) {
        if (request[http::field::authorization] == "Bearer " + it->second.first) {
          response.result(http::status::ok);
          response.body() = it->second.second;
        } else {
          response.result(http::status::unauthorized);
          response.body() = R"({"error":{"code":"unauthenticated","message":"bad allocation token"}})";
        }
      }
    }
    response.prepare_payload();
    beast::error_code ec;
    co_await http::async_write(socket, response, net::redirect_error(net::use_awaitable, ec));
  }

  net::io_context io_;
  net::executor_work_guard<net::io_context::executor_type> work_{io_.get_executor()};
  tcp::acceptor acceptor_;
  std::thread thread_;
  std::shared_ptr<Connection> current_;  // io_ thread: the latest agent connection
  std::atomic<bool> refuse_{false};
  std::atomic<int> refused_{0};
  std::atomic<int> connections_{0};
  std::atomic<bool> close_frame_seen_{false};
  std::mutex mutex_;  // guards what tests read
  std::vector<Frame> frames_;
  std::string authorization_;
  std::string target_;
  std::map<std::string, std::pair<std::string, std::string>> files_;  // path -> (token, body)
  std::vector<std::string> file_requests_;
  std::vector<std::chrono::steady_clock::time_point> refused_at_;
};

}  // namespace ring::agent_test
