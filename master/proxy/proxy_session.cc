#include "master/proxy/proxy_session.h"

#include <array>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

#include <utility>  // before Asio

#include <spdlog/spdlog.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket/rfc6455.hpp>

#include "master/proxy/proxy_admission.h"
#include "master/proxy/proxy_headers.h"
#include "master/proxy/proxy_pages.h"
#include "master/proxy/task_proxy.h"

namespace ring {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

constexpr size_t kPiece = 64 * 1024;                    // one piece of a streamed body
constexpr uint32_t kUpstreamHeaderLimit = 1024 * 1024;  // the header of a task server's answer
constexpr auto kOwnWriteTimeout = std::chrono::seconds(30);
constexpr auto kShutdownTimeout = std::chrono::seconds(5);

net::awaitable<void> Shutdown(AnyStream& stream) {
  beast::error_code ec;
  stream.tcp().expires_after(kShutdownTimeout);
  co_await stream.async_shutdown(net::redirect_error(net::use_awaitable, ec));
}

// Reads and drops a little of what the client still sends (a body the proxy
// did not take), so closing does not reset the connection before the client
// has read the answer.
net::awaitable<void> Drain(AnyStream& stream) {
  stream.tcp().expires_after(std::chrono::seconds(2));
  std::array<char, 16384> sink;
  size_t drained = 0;
  beast::error_code ec;
  while (!ec && drained < (1u << 20))
    drained +=
        co_await stream.async_read_some(net::buffer(sink), net::redirect_error(net::use_awaitable, ec));
}

// Writes one of the proxy's own answers; true when the connection goes on.
net::awaitable<bool> WriteOwn(AnyStream& client, http::response<http::string_body> res) {
  beast::error_code ec;
  client.tcp().expires_after(kOwnWriteTimeout);
  co_await http::async_write(client, res, net::redirect_error(net::use_awaitable, ec));
  co_return !ec && res.keep_alive();
}

// Moves one message's body from `from` to `to` piece by piece as it arrives
// (the header first), never holding more than one piece: Beast's buffer_body
// relay. `moved` is called after each piece is written.
template <bool isRequest>
net::awaitable<beast::error_code> RelayMessage(AnyStream& from, beast::flat_buffer& from_buffer,
                                               http::parser<isRequest, http::buffer_body>& p, AnyStream& to,
                                               http::serializer<isRequest, http::buffer_body>& sr,
                                               std::chrono::milliseconds idle,
                                               const std::function<void()>& moved) {
  std::vector<char> piece(kPiece);
  beast::error_code ec;
  do {
    if (!p.is_done()) {
      p.get().body().data = piece.data();
      p.get().body().size = piece.size();
      from.tcp().expires_after(idle);
      co_await http::async_read_some(from, from_buffer, p, net::redirect_error(net::use_awaitable, ec));
      if (ec == http::error::need_buffer) ec = {};
      if (ec) co_return ec;
      p.get().body().size = piece.size() - p.get().body().size;
      // No body bytes yet (a chunk's header, say): nothing to write but the
      // header. An empty piece must not reach a chunked serializer, which
      // would write it as the last chunk.
      p.get().body().data = p.get().body().size > 0 ? piece.data() : nullptr;
      p.get().body().more = !p.is_done();
    } else {
      p.get().body().data = nullptr;
      p.get().body().size = 0;
      p.get().body().more = false;
    }
    to.tcp().expires_after(idle);
    co_await http::async_write(to, sr, net::redirect_error(net::use_awaitable, ec));
    if (ec == http::error::need_buffer) ec = {};
    if (ec) co_return ec;
    moved();
  } while (!p.is_done() && !sr.is_done());
  co_return ec;
}

// Copies bytes from `from` to `to` until either fails, closes or is idle.
net::awaitable<void> Pump(AnyStream& from, AnyStream& to, std::chrono::milliseconds idle,
                          std::function<void()> moved) {
  std::vector<char> piece(kPiece);
  beast::error_code ec;
  for (;;) {
    from.tcp().expires_after(idle);
    const size_t n =
        co_await from.async_read_some(net::buffer(piece), net::redirect_error(net::use_awaitable, ec));
    if (ec || n == 0) break;
    to.tcp().expires_after(idle);
    co_await net::async_write(to, net::buffer(piece.data(), n), net::redirect_error(net::use_awaitable, ec));
    if (ec) break;
    to.tcp().expires_after(idle);
    moved();
  }
}

// The connection to a task's server that a client connection's requests use
// while they go to the same server; it holds one of the user's slots.
struct Upstream {
  std::optional<AnyStream> stream;
  beast::flat_buffer buffer;
  std::string key;  // host:port
  std::optional<UserConnectionLimits::Slot> slot;

  void Close() {
    if (stream) {
      beast::error_code ec;
      stream->tcp().socket().shutdown(tcp::socket::shutdown_both, ec);
      stream->tcp().close();
    }
    stream.reset();
    buffer.clear();
    key.clear();
    slot.reset();
  }
};

net::awaitable<Status> Connect(const ProxySessionContext& ctx, Upstream& up, const AnnouncedService& service,
                               const std::string& user) {
  const std::string key = service.host + ":" + std::to_string(service.port);
  if (up.stream && up.key == key) co_return Status::Ok();
  up.Close();
  auto slot = ctx.proxy.limits().Take(user);
  if (!slot)
    co_return Status(ErrorCode::kTooManyRequests,
                     "You have " + std::to_string(ctx.proxy.limits().max_per_user()) +
                         " proxied connections open, the master's limit per user "
                         "(proxy.max_connections_per_user). Close some tabs and try again.");
  auto executor = co_await net::this_coro::executor;
  tcp::resolver resolver(executor);
  beast::error_code ec;
  auto endpoints = co_await resolver.async_resolve(service.host, std::to_string(service.port),
                                                   net::redirect_error(net::use_awaitable, ec));
  if (ec) co_return Unavailable("cannot resolve " + service.host + ": " + ec.message());
  beast::tcp_stream stream(executor);
  stream.expires_after(ctx.options.connect_timeout);
  co_await stream.async_connect(endpoints, net::redirect_error(net::use_awaitable, ec));
  if (ec)
    co_return Unavailable("task " + std::to_string(service.task_id) + "'s server at " + key +
                          " does not answer: " + ec.message());
  stream.socket().set_option(tcp::no_delay(true), ec);
  up.stream.emplace(std::move(stream));
  up.key = key;
  up.slot.emplace(std::move(*slot));
  co_return Status::Ok();
}

// After the upstream's 101: bytes both ways until either side closes or
// nothing moves for the idle timeout.
net::awaitable<void> RelayWebSocket(const ProxySessionContext& ctx, AnyStream& client,
                                    beast::flat_buffer& client_buffer, Upstream& up,
                                    const std::function<void()>& moved) {
  const auto idle = ctx.options.idle_timeout;
  beast::error_code ec;
  // Bytes read past either header belong to the other side.
  if (client_buffer.size() > 0) {
    co_await net::async_write(*up.stream, client_buffer.data(), net::redirect_error(net::use_awaitable, ec));
    client_buffer.consume(client_buffer.size());
    if (ec) co_return;
  }
  if (up.buffer.size() > 0) {
    co_await net::async_write(client, up.buffer.data(), net::redirect_error(net::use_awaitable, ec));
    up.buffer.consume(up.buffer.size());
    if (ec) co_return;
  }
  auto executor = co_await net::this_coro::executor;
  auto done = std::make_shared<net::steady_timer>(executor, std::chrono::steady_clock::time_point::max());
  auto finished = std::make_shared<bool>(false);
  AnyStream* client_ptr = &client;
  // Upstream to client on the same strand; its end stops the other way.
  net::co_spawn(executor, Pump(*up.stream, client, idle, moved),
                [done, finished, client_ptr](std::exception_ptr) {
                  *finished = true;
                  client_ptr->tcp().cancel();
                  done->cancel();
                });
  co_await Pump(client, *up.stream, idle, moved);
  if (!*finished) {
    up.stream->tcp().cancel();
    up.stream->tcp().close();
    co_await done->async_wait(net::redirect_error(net::use_awaitable, ec));
  }
}

}  // namespace

net::awaitable<void> ServeProxy(const ProxySessionContext& ctx, AnyStream& client, beast::flat_buffer& buffer,
                                const std::string& peer) {
  TaskProxy& proxy = ctx.proxy;
  Upstream up;
  bool drain = false;
  for (;;) {
    http::request_parser<http::buffer_body> parser;
    parser.header_limit(ctx.options.header_limit);
    parser.body_limit(std::numeric_limits<uint64_t>::max());  // bodies are streamed, never held
    client.tcp().expires_after(ctx.options.read_timeout);
    beast::error_code ec;
    co_await http::async_read_header(client, buffer, parser, net::redirect_error(net::use_awaitable, ec));
    if (ec == http::error::header_limit) {
      auto refused = ProxyPage(http::status::request_header_fields_too_large, "Request too large",
                               "The request's header fields are over the limit of " +
                                   std::to_string(ctx.options.header_limit) + " bytes.",
                               11, false);
      co_await WriteOwn(client, std::move(refused));
      break;
    }
    if (ec) break;
    auto& req = parser.get();
    const unsigned version = req.version();
    const bool has_body = parser.content_length().value_or(0) > 0 || parser.chunked();
    // The proxy's own answers keep the connection only when no body is left unread.
    ProxyAdmission admitted = AdmitProxyRequest(proxy, ctx.tls, req, peer, req.keep_alive() && !has_body);
    if (admitted.reply) {
      drain = has_body;
      // The answer to a HEAD has the header of a GET's, and no body.
      if (req.method() == http::verb::head) admitted.reply->body().clear();
      const bool go_on = co_await WriteOwn(client, std::move(*admitted.reply));
      if (!go_on) break;
      continue;
    }
    const int64_t task = admitted.service.task_id;
    const bool upgrade = beast::websocket::is_upgrade(req);
    const bool reused =
        up.stream && up.key == admitted.service.host + ":" + std::to_string(admitted.service.port);
    Status connected = co_await Connect(ctx, up, admitted.service, admitted.grant.username);
    if (!connected.ok()) {
      // The user's limit is a 503 like the listener's own; an unreachable server a 502.
      const bool limit = connected.code() == ErrorCode::kTooManyRequests;
      auto refused = ProxyPage(limit ? http::status::service_unavailable : http::status::bad_gateway,
                               limit ? "Too many connections" : "Service unreachable", connected.message(),
                               version, false);
      drain = has_body;
      co_await WriteOwn(client, std::move(refused));
      break;
    }
    const bool client_keep_alive = req.keep_alive();
    const bool head = req.method() == http::verb::head;
    const bool expects_continue = beast::iequals(req[http::field::expect], "100-continue");
    req.erase(http::field::expect);
    PrepareUpstreamRequest(req, peer, ctx.tls, upgrade, admitted.service.token);
    const std::function<void()> touch = [&proxy, task] {
      proxy.activity().Touch(task, std::chrono::system_clock::now());
    };
    touch();
    if (expects_continue) {
      static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
      co_await net::async_write(client, net::buffer(kContinue.data(), kContinue.size()),
                                net::redirect_error(net::use_awaitable, ec));
      if (ec) break;
    }
    // The request, then the answer's header; informational answers (1xx but
    // a 101) are skipped. A kept-alive connection the server has closed
    // meanwhile fails before any answer: a request without a body is then
    // sent once more on a new connection, as browsers do.
    std::optional<http::response_parser<http::buffer_body>> answer;
    bool answered = false;
    for (int attempt = 0; attempt < 2 && !answered; ++attempt) {
      if (attempt > 0) {
        if (!reused || has_body) break;
        up.Close();
        Status again = co_await Connect(ctx, up, admitted.service, admitted.grant.username);
        if (!again.ok()) break;
      }
      http::request_serializer<http::buffer_body> request_out{req};
      ec = co_await RelayMessage(client, buffer, parser, *up.stream, request_out, ctx.options.idle_timeout,
                                 touch);
      if (ec) {
        spdlog::debug("[proxy] task {}: relaying a request failed: {}", task, ec.message());
        continue;
      }
      for (int informational = 0; informational < 8; ++informational) {
        answer.emplace();
        answer->header_limit(kUpstreamHeaderLimit);
        answer->body_limit(std::numeric_limits<uint64_t>::max());
        if (head) answer->skip(true);
        up.stream->tcp().expires_after(ctx.options.idle_timeout);
        co_await http::async_read_header(*up.stream, up.buffer, *answer,
                                         net::redirect_error(net::use_awaitable, ec));
        if (ec) break;
        const unsigned code = answer->get().result_int();
        if (code < 100 || code >= 200 || code == 101) {
          answered = true;
          break;
        }
      }
    }
    if (!answered) {
      up.Close();
      auto failed = ProxyPage(http::status::bad_gateway, "Service unreachable",
                              "Task " + std::to_string(task) + "'s server gave no answer" +
                                  (ec ? ": " + ec.message() : std::string()) + ".",
                              version, false);
      co_await WriteOwn(client, std::move(failed));
      break;
    }
    auto& rp = *answer;
    auto& res = rp.get();
    const bool switching = upgrade && res.result() == http::status::switching_protocols;
    const bool upstream_keep_alive = res.keep_alive() && !switching;
    PrepareClientResponse(res, switching);
    if (!switching) {
      // A body framed by the server's closing goes to the browser chunked, so
      // the browser's connection can stay open.
      const unsigned code = res.result_int();
      const bool has_answer_body = !head && code != 204 && code != 304;
      bool keep = client_keep_alive && !upgrade;
      if (has_answer_body && !rp.chunked() && !rp.content_length()) {
        if (version >= 11)
          res.chunked(true);
        else
          keep = false;
      }
      res.keep_alive(keep);
      http::response_serializer<http::buffer_body> answer_out{res};
      ec = co_await RelayMessage(*up.stream, up.buffer, rp, client, answer_out, ctx.options.idle_timeout,
                                 touch);
      if (ec || !upstream_keep_alive || !rp.is_done()) up.Close();
      if (ec || !keep) break;
      continue;
    }
    // The WebSocket: the 101, then bytes both ways.
    http::response_serializer<http::buffer_body> answer_out{res};
    ec =
        co_await RelayMessage(*up.stream, up.buffer, rp, client, answer_out, ctx.options.idle_timeout, touch);
    if (!ec) {
      spdlog::debug("[proxy] task {}: WebSocket of {} open", task, admitted.grant.username);
      co_await RelayWebSocket(ctx, client, buffer, up, touch);
    }
    break;
  }
  up.Close();
  co_await Shutdown(client);
  if (drain) co_await Drain(client);
}

}  // namespace ring
