// Simulated agents for bench/scale.sh: N agents, each enrolling its id with
// the cluster token (POST /api/v1/agents/enrol) and then, on the same
// connection, opening its WebSocket at /api/v1/agents/ws with the credential
// it was given, as ringagent does on its first start, saying hello with SLOTS
// CPU slots (default 1) and then heartbeating at the interval the master's
// welcome gives, as ringagent does, from one process and one thread. Messages
// from the master are read and dropped (the benchmark runs no trials).
//   agents_load HOST PORT TOKEN_FILE AGENTS SECONDS [SLOTS [SOURCE_ADDRESS]]
// SOURCE_ADDRESS: the local address the agents connect from (e.g. 127.0.0.2,
// so a master can tell them from other clients on 127.0.0.1). At most
// kConnecting agents connect and enrol at once, as a real fleet starting
// does not all arrive in the same millisecond and the master's accept
// backlog is finite.
// Prints one JSON object: agents welcomed, heartbeats sent, failures, and
// how long it took until every agent was welcomed.
#include <utility>  // before Asio (std::exchange with g++ 12)

#include <algorithm>
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
  int connecting = 0;  // agents between connect and welcome (one thread)
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  double all_welcomed_s = 0;
};

struct Settings {
  std::string host, port, token;
  int agents = 0;
  int slots = 1;
  std::string source;  // empty: any local address
  std::chrono::steady_clock::time_point until;
};

constexpr int kConnecting = 256;

net::awaitable<void> Reader(std::shared_ptr<Socket> ws) {
  beast::flat_buffer buffer;
  for (beast::error_code ec; !ec;) {
    buffer.clear();
    co_await ws->async_read(buffer, net::redirect_error(use_awaitable, ec));
  }
}

net::awaitable<void> Agent(const Settings& settings, int index, Totals& totals) {
  auto executor = co_await net::this_coro::executor;
  net::steady_timer wait(executor);
  while (totals.connecting >= kConnecting) {
    wait.expires_after(std::chrono::milliseconds(5));
    co_await wait.async_wait(use_awaitable);
  }
  ++totals.connecting;
  struct Done {
    Totals& t;
    bool armed = true;
    void Release() {
      if (armed) --t.connecting;
      armed = false;
    }
    ~Done() { Release(); }
  } done{totals};
  const std::string& host = settings.host;
  const std::string& port = settings.port;
  auto ws = std::make_shared<Socket>(executor);
  beast::error_code ec;
  net::ip::tcp::resolver resolver(executor);
  auto endpoints = co_await resolver.async_resolve(host, port, net::redirect_error(use_awaitable, ec));
  if (!ec && endpoints.empty()) ec = net::error::host_not_found;
  if (!ec) {
    // One endpoint, on a socket bound first when a source address is given
    // (a connect over a range would reopen the socket and lose the bind).
    const auto endpoint = endpoints.begin()->endpoint();
    auto& socket = beast::get_lowest_layer(*ws).socket();
    socket.open(endpoint.protocol(), ec);
    if (!ec && !settings.source.empty()) socket.bind({net::ip::make_address(settings.source, ec), 0}, ec);
    if (!ec) co_await socket.async_connect(endpoint, net::redirect_error(use_awaitable, ec));
  }
  const std::string id = "sim-" + std::to_string(index);
  std::string credential;
  if (!ec) {
    namespace http = beast::http;
    http::request<http::string_body> req{http::verb::post, "/api/v1/agents/enrol", 11};
    req.set(http::field::host, host + ":" + port);
    req.set(http::field::authorization, "Bearer " + settings.token);
    req.set(http::field::content_type, "application/json");
    req.keep_alive(true);
    req.body() = nlohmann::json{{"agent_id", id}, {"slots", settings.slots}}.dump();
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
  for (int slot = 0; slot < settings.slots; ++slot) hello.slots.push_back({slot, "cpu", ""});
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
  done.Release();
  if (++totals.welcomed == settings.agents) {
    totals.all_welcomed_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - totals.start).count();
    std::cerr << "agents_load: all " << settings.agents << " agents welcomed in " << totals.all_welcomed_s
              << " s" << std::endl;  // bench/scale.sh waits for this line
  }
  const auto interval =
      std::chrono::milliseconds(std::get<ring::proto::Welcome>(*welcome).heartbeat_interval_ms);
  net::co_spawn(executor, Reader(ws), net::detached);
  const std::string beat = ring::proto::Encode(ring::proto::Heartbeat{});
  // Each agent keeps its own phase, as agents on machines of their own do:
  // a beat this process sends late (behind its other agents, or waiting for
  // its core) does not move the next one, so late beats do not gather the
  // agents into bursts that beat together from then on.
  net::steady_timer timer(executor);
  auto due = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() < settings.until) {
    due += interval;
    timer.expires_at(due);
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
  if (argc < 6 || argc > 8) {
    std::cerr << "usage: agents_load HOST PORT TOKEN_FILE AGENTS SECONDS [SLOTS [SOURCE_ADDRESS]]\n";
    return 2;
  }
  Settings settings;
  settings.host = argv[1];
  settings.port = argv[2];
  std::ifstream(argv[3]) >> settings.token;
  settings.agents = std::stoi(argv[4]);
  settings.until = std::chrono::steady_clock::now() + std::chrono::seconds(std::stoi(argv[5]));
  if (argc > 6) settings.slots = std::max(1, std::stoi(argv[6]));
  if (argc > 7) settings.source = argv[7];
  net::io_context ioc;
  Totals totals;
  for (int i = 0; i < settings.agents; ++i) net::co_spawn(ioc, Agent(settings, i, totals), net::detached);
  ioc.run();
  std::cout << nlohmann::json{{"agents", settings.agents},
                              {"welcomed", totals.welcomed.load()},
                              {"all_welcomed_s", totals.all_welcomed_s},
                              {"heartbeats", totals.heartbeats.load()},
                              {"failed", totals.failed.load()},
                              {"last_error", totals.last_error}}
                   .dump()
            << "\n";
  return totals.failed == 0 ? 0 : 1;
}
