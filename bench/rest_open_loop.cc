// Readers at a fixed request rate (open loop) for bench/scale.sh: request i
// is due at start + i / RATE whether or not the answers before it came back,
// and its latency is counted from that due time, not from when it was sent,
// so time spent queued behind a slow answer (in the master, or waiting for a
// free connection here) is part of the figure: no coordinated omission. The
// requests are the closed-loop readers' mix (scale.sh's wrk script): the
// experiments list, one of experiments 1..100 and the job queue, in turn.
//   rest_open_loop HOST PORT TOKEN_FILE RATE SECONDS [CONNECTIONS]
// CONNECTIONS keep-alive connections (default 200, the closed loop's) are
// opened before the first request is due; whichever is free sends the next
// due request. The first second at RATE is a warm-up, sent but not counted;
// then SECONDS are measured. One thread. Prints one line on stdout:
//   "achieved_rps p50_ms p99_ms p999_ms max_ms non2xx errors"
// achieved_rps is the answers received over SECONDS; requests due after the
// window are not sent, and those in flight at its end are awaited (up to 10
// s) and counted. Details as JSON on stderr, with how late requests left
// this program after they were due (its own share of the latency).
// REST_OPEN_LOOP_TRACE=FILE writes "due_ms latency_ms" for every answer.
#include <utility>  // before Asio (std::exchange with g++ 12)

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using net::use_awaitable;
using Clock = std::chrono::steady_clock;

struct Schedule {
  std::string host, port, authorization;
  double rate = 0;
  Clock::time_point start, measured_from, end;
  int64_t next = 0;  // the next request to send (one thread)
  // Request i is requests[i % size], written out once (the mix repeats
  // every 300 requests: 3 routes, 100 experiments).
  std::vector<std::string> requests;
  Clock::time_point Due(int64_t i) const {
    return start + std::chrono::duration_cast<Clock::duration>(
                       std::chrono::duration<double>(static_cast<double>(i) / rate));
  }
};

struct Results {
  std::vector<double> latency_ms;
  // How late each request left here after it was due: this program's own
  // delay (a busy core, no free connection), part of latency_ms.
  std::vector<double> send_lag_ms;
  std::vector<double> by_route_ms[3];            // latency_ms by Route()
  std::vector<std::pair<double, double>> trace;  // (due ms after the window opened, latency ms)
  int64_t non2xx = 0, errors = 0;
  std::string last_error;
  int ready = 0;  // connections open
};

// Which of the three requests i is: 0 the list, 1 one experiment, 2 the jobs.
int Route(int64_t i) {
  return static_cast<int>((i + 1) % 3 == 0 ? 0 : (i + 1) % 3);
}

// The wrk script's mix: n counts from 1, paths[n % 3] of these three.
std::string Target(int64_t i) {
  const int64_t n = i + 1;
  switch (n % 3) {
    case 0:
      return "/api/v1/experiments";
    case 1:
      return "/api/v1/experiments/" + std::to_string(n % 100 + 1);
    default:
      return "/api/v1/jobs";
  }
}

constexpr std::chrono::milliseconds kWarmUp{1000};

double Percentile(std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  return sorted[static_cast<size_t>(q * static_cast<double>(sorted.size() - 1))];
}

net::awaitable<void> Reader(Schedule& schedule, Results& results, net::ip::tcp::endpoint endpoint) {
  auto executor = co_await net::this_coro::executor;
  // A bare socket, no per-operation timer (Beast's tcp_stream arms one per
  // read and write): the run's own deadline bounds a request that hangs,
  // and this thread's cost per request is part of the latency measured.
  net::ip::tcp::socket stream(executor);
  beast::error_code ec;
  co_await stream.async_connect(endpoint, net::redirect_error(use_awaitable, ec));
  if (ec) {
    ++results.errors;
    results.last_error = "connect: " + ec.message();
    co_return;
  }
  stream.set_option(net::ip::tcp::no_delay(true), ec);
  ++results.ready;
  net::steady_timer timer(executor);
  beast::flat_buffer buffer;
  for (;;) {
    const int64_t i = schedule.next;
    const Clock::time_point due = schedule.Due(i);
    if (due >= schedule.end) co_return;
    ++schedule.next;
    if (Clock::now() < due) {
      timer.expires_at(due);
      co_await timer.async_wait(net::redirect_error(use_awaitable, ec));
    }
    const bool measured = due >= schedule.measured_from;
    if (measured)
      results.send_lag_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - due).count());
    const std::string& req = schedule.requests[static_cast<size_t>(i) % schedule.requests.size()];
    co_await net::async_write(stream, net::buffer(req), net::redirect_error(use_awaitable, ec));
    http::response<http::string_body> res;
    if (!ec) co_await http::async_read(stream, buffer, res, net::redirect_error(use_awaitable, ec));
    if (ec) {  // the request is lost, and so is this connection
      ++results.errors;
      results.last_error = ec.message();
      co_return;
    }
    if (!measured) continue;
    results.latency_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - due).count());
    results.by_route_ms[Route(i)].push_back(results.latency_ms.back());
    results.trace.emplace_back(
        std::chrono::duration<double, std::milli>(due - schedule.measured_from).count(),
        results.latency_ms.back());
    if (res.result_int() / 100 != 2) ++results.non2xx;
  }
}

double RouteP99(std::vector<double>& v) {
  std::sort(v.begin(), v.end());
  return Percentile(v, 0.99);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6 || argc > 7) {
    std::cerr << "usage: rest_open_loop HOST PORT TOKEN_FILE RATE SECONDS [CONNECTIONS]\n";
    return 2;
  }
  Schedule schedule;
  schedule.host = argv[1];
  schedule.port = argv[2];
  std::string token;
  std::ifstream(argv[3]) >> token;
  schedule.authorization = "Bearer " + token;
  for (int64_t i = 0; i < 300; ++i)
    schedule.requests.push_back("GET " + Target(i) + " HTTP/1.1\r\nHost: " + schedule.host + ":" +
                                schedule.port + "\r\nAuthorization: " + schedule.authorization + "\r\n\r\n");
  schedule.rate = std::stod(argv[4]);
  const double seconds = std::stod(argv[5]);
  const int connections = argc > 6 ? std::stoi(argv[6]) : 200;
  if (schedule.rate <= 0 || seconds <= 0 || connections <= 0) {
    std::cerr << "rest_open_loop: RATE, SECONDS and CONNECTIONS must be positive\n";
    return 2;
  }
  net::io_context ioc(1);
  net::ip::tcp::resolver resolver(ioc);
  const auto endpoint = resolver.resolve(schedule.host, schedule.port).begin()->endpoint();
  // Far enough ahead for every connection to open before the first is due,
  // then kWarmUp at the same rate that is not counted (the first answers on
  // new connections, the master's caches filling).
  schedule.start = Clock::now() + std::chrono::milliseconds(200 + connections);
  schedule.measured_from = schedule.start + kWarmUp;
  schedule.end = schedule.measured_from +
                 std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  Results results;
  results.latency_ms.reserve(static_cast<size_t>(schedule.rate * seconds) + 16);
  results.send_lag_ms.reserve(results.latency_ms.capacity());
  for (int c = 0; c < connections; ++c)
    net::co_spawn(ioc, Reader(schedule, results, endpoint), net::detached);
  ioc.run_for(std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds)) +
              std::chrono::milliseconds(200 + connections) + kWarmUp + std::chrono::seconds(10));
  if (const char* path = std::getenv("REST_OPEN_LOOP_TRACE")) {  // one "due_ms latency_ms" per answer
    std::ofstream trace(path);
    for (const auto& [due, ms] : results.trace) trace << due << ' ' << ms << '\n';
  }
  const int64_t sent = schedule.next - static_cast<int64_t>(schedule.rate * 1e-3 * kWarmUp.count());
  const int64_t unanswered = sent - static_cast<int64_t>(results.latency_ms.size()) - results.errors;
  std::vector<double>& v = results.latency_ms;
  std::sort(v.begin(), v.end());
  std::vector<double>& lag = results.send_lag_ms;
  std::sort(lag.begin(), lag.end());
  const double achieved = static_cast<double>(v.size()) / seconds;
  char line[256];
  std::snprintf(line, sizeof line, "%.0f %.2f %.2f %.2f %.2f %lld %lld", achieved, Percentile(v, 0.50),
                Percentile(v, 0.99), Percentile(v, 0.999), v.empty() ? 0.0 : v.back(),
                static_cast<long long>(results.non2xx), static_cast<long long>(results.errors + unanswered));
  std::cout << line << std::endl;
  std::cerr
      << nlohmann::json{{"rate", schedule.rate},
                        {"seconds", seconds},
                        {"connections", connections},
                        {"opened", results.ready},
                        {"sent", sent},
                        {"answered", v.size()},
                        {"unanswered", unanswered},
                        {"non2xx", results.non2xx},
                        {"p99_ms_by_route",
                         {{"experiments", RouteP99(results.by_route_ms[0])},
                          {"experiment", RouteP99(results.by_route_ms[1])},
                          {"jobs", RouteP99(results.by_route_ms[2])}}},
                        {"window_opened_monotonic_s",  // to line the trace up with others
                         std::chrono::duration<double>(schedule.measured_from.time_since_epoch()).count()},
                        {"send_lag_ms_p50", Percentile(lag, 0.5)},
                        {"send_lag_ms_p99", Percentile(lag, 0.99)},
                        {"send_lag_ms_max", lag.empty() ? 0.0 : lag.back()},
                        {"errors", results.errors},
                        {"last_error", results.last_error}}
             .dump()
      << "\n";
  return results.errors + unanswered == 0 ? 0 : 1;
}
