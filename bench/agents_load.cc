// Simulated agents for bench/scale.sh: N agents, each enrolling its id with
// the cluster token (POST /api/v1/agents/enrol) and then, on the same
// connection, opening its WebSocket at /api/v1/agents/ws with the credential
// it was given, as ringagent does on its first start, saying hello with one CPU
// slot and then heartbeating at the interval the master's welcome gives, as
// ringagent does, from one process and one thread. Messages from the master
// are read and dropped (the benchmark runs no trials).
//   agents_load HOST PORT TOKEN_FILE AGENTS SECONDS
// Prints one JSON object: agents welcomed, heartbeats sent, failures.
#include <utility>  // before Asio (std::exchange with g++ 12)

#include <atomic>
#include <chrono>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <nlohmann/json.hpp>

#include "common/agent_protocol.h"

namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using net::use_awaitable;
using Socket = websocket::stream<beast::tcp_stream>;

struct Totals {
  std::atomic<int64_t> welcomed{0}, heartbeats{0}, failed{0};
  std::string last_error;
};

net::awaitable<void> Reader(std::shared_ptr<Socket> ws) {
  beast::flat_buffer buffer;
  for (beast::error_code ec; !ec;) {
    buffer.clear();
    co_await ws->async_read(buffer, net::redirect_error(use_awaitable, ec));
  }
}

net::awaitable<void> Agent(std::string host, std::string port, std::string token, int index,
                           std::chrono::steady_clock::time_point until, Totals& totals) {
  auto executor = co_await net::this_coro::executor;
  auto ws = std::make_shared<Socket>(executor);
  beast::error_code ec;
  net::ip::tcp::resolver resolver(executor);
  auto endpoints = co_await resolver.async_resolve(host, port, net::redirect_error(use_awaitable, ec));
  if (!ec)
    co_await beast::get_lowest_layer(*ws).async_connect(endpoints, net::redirect_error(use_awaitable, ec));
  const std::string id = "sim-" + std::to_string(index);
  std::string credential;
  if (!ec) {
    namespace http = beast::http;
    http::request<http::string_body> req{http::verb::post, "/api/v1/agents/enrol", 11};
    req.set(http::field::host, host + ":" + port);
    req.set(http::field::authorization, "Bearer " + token);
    req.set(http::field::content_type, "application/json");
    req.keep_alive(true);
    req.body() = nlohmann::json{{"agent_id", id}, {"slots", 1}}.dump();
    req.prepare_payload();
    co_await http::async_write(beast::get_lowest_layer(*ws), req, net::redirect_error(use_awaitable, ec));
    beast::flat_buffer enrol_buffer;
    http::response<http::string_body> res;
    if (!ec)
      co_await http::async_read(beast::get_lowest_layer(*ws), enrol_buffer, res,
                                net::redirect_error(use_awaitable, ec));
    auto body = nlohmann::json::parse(res.body(), nullptr, false);
    if (!ec && res.result_int() == 201 && body.is_object() && body["credential"].is_string())
      credential = body["credential"].get<std::string>();
    else if (!ec)
      ec = beast::http::error::bad_status;
  }
  if (!ec) {
    ws->set_option(websocket::stream_base::decorator([&id, &credential](websocket::request_type& req) {
      req.set("X-Ring-Agent-Id", id);
      req.set(beast::http::field::authorization, "Bearer " + credential);
    }));
    co_await ws->async_handshake(host + ":" + port, "/api/v1/agents/ws",
                                 net::redirect_error(use_awaitable, ec));
  }
  ring::proto::Hello hello;
  hello.agent_id = id;
  hello.address = "127.0.0.1";
  hello.version = "bench";
  hello.slots = {{0, "cpu", ""}};
  beast::flat_buffer buffer;
  if (!ec) {
    ws->text(true);
    co_await ws->async_write(net::buffer(ring::proto::Encode(hello)), net::redirect_error(use_awaitable, ec));
  }
  if (!ec) co_await ws->async_read(buffer, net::redirect_error(use_awaitable, ec));
  if (ec) {
    ++totals.failed;
    totals.last_error = ec.message();
    co_return;
  }
  auto welcome = ring::proto::Decode(beast::buffers_to_string(buffer.data()));
  if (!welcome.ok() || !std::holds_alternative<ring::proto::Welcome>(*welcome)) {
    ++totals.failed;
    totals.last_error = "no welcome";
    co_return;
  }
  ++totals.welcomed;
  const auto interval =
      std::chrono::milliseconds(std::get<ring::proto::Welcome>(*welcome).heartbeat_interval_ms);
  net::co_spawn(executor, Reader(ws), net::detached);
  const std::string beat = ring::proto::Encode(ring::proto::Heartbeat{});
  net::steady_timer timer(executor);
  while (std::chrono::steady_clock::now() < until) {
    timer.expires_after(interval);
    co_await timer.async_wait(net::redirect_error(use_awaitable, ec));
    co_await ws->async_write(net::buffer(beat), net::redirect_error(use_awaitable, ec));
    if (ec) {
      ++totals.failed;
      totals.last_error = ec.message();
      co_return;
    }
    ++totals.heartbeats;
  }
  co_await ws->async_close(websocket::close_code::normal, net::redirect_error(use_awaitable, ec));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) {
    std::cerr << "usage: agents_load HOST PORT TOKEN_FILE AGENTS SECONDS\n";
    return 2;
  }
  std::string token;
  std::ifstream(argv[3]) >> token;
  const int agents = std::stoi(argv[4]);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(std::stoi(argv[5]));
  net::io_context ioc;
  Totals totals;
  for (int i = 0; i < agents; ++i)
    net::co_spawn(ioc, Agent(argv[1], argv[2], token, i, until, totals), net::detached);
  ioc.run();
  std::cout << nlohmann::json{{"agents", agents},
                              {"welcomed", totals.welcomed.load()},
                              {"heartbeats", totals.heartbeats.load()},
                              {"failed", totals.failed.load()},
                              {"last_error", totals.last_error}}
                   .dump()
            << "\n";
  return totals.failed == 0 ? 0 : 1;
}
