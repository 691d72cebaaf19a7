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

#include "master/proxy/proxy_cookies.h"
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

std::string HtmlEscape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// The headers of the proxy's own answers (its error pages and the ticket's
// redirect): nothing in them runs, frames them, is cached or leaks a referrer.
template <class Fields>
void AddOwnHeaders(Fields& fields) {
  fields.set(http::field::server, "ringmaster-proxy");
  fields.set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'");
  fields.set("X-Content-Type-Options", "nosniff");
  fields.set("X-Frame-Options", "DENY");
  fields.set("Referrer-Policy", "no-referrer");
  fields.set(http::field::cache_control, "no-store");
}

http::response<http::string_body> Page(http::status status, const std::string& title, const std::string& text,
                                       unsigned version, bool keep_alive) {
  http::response<http::string_body> res{status, version};
  AddOwnHeaders(res);
  res.set(http::field::content_type, "text/html; charset=utf-8");
  res.body() = "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>" + HtmlEscape(title) +
               "</title></head>\n<body><h1>" + HtmlEscape(title) + "</h1>\n<p>" + HtmlEscape(text) +
               "</p></body></html>\n";
  res.keep_alive(keep_alive);
  res.prepare_payload();
  return res;
}

http::status StatusOf(const Status& s) {
  switch (s.code()) {
    case ErrorCode::kUnauthenticated:
      return http::status::unauthorized;
    case ErrorCode::kPermissionDenied:
      return http::status::forbidden;
    case ErrorCode::kNotFound:
      return http::status::not_found;
    case ErrorCode::kTooManyRequests:
      return http::status::too_many_requests;
    case ErrorCode::kUnavailable:
      return http::status::service_unavailable;
    default:
      return http::status::internal_server_error;
  }
}

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

std::string Lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Removes the hop-by-hop headers: those the Connection header names and the
// fixed ones (RFC 9110 7.6.1). The body's framing (Content-Length,
// Transfer-Encoding) stays: the serializer writes the body as it was read.
template <bool isRequest, class Body>
void DropHopByHop(http::message<isRequest, Body>& m, bool upgrade) {
  std::vector<std::string> named;
  {
    std::string_view list = m[http::field::connection];
    while (!list.empty()) {
      auto comma = list.find(',');
      std::string_view item = list.substr(0, comma);
      list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
      while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
      while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
      const std::string name = Lower(item);
      if (!name.empty() && name != "close" && name != "keep-alive" && name != "upgrade" &&
          name != "content-length" && name != "transfer-encoding")
        named.push_back(name);
    }
  }
  for (const auto& name : named) m.erase(name);
  m.erase(http::field::keep_alive);
  m.erase("Proxy-Connection");
  m.erase(http::field::te);
  m.erase(http::field::trailer);
  m.erase(http::field::proxy_authorization);
  m.erase(http::field::proxy_authenticate);
  if (!upgrade) {
    m.erase(http::field::upgrade);
    m.erase(http::field::connection);
  }
}

// What the task's server gets: never the proxy's cookie, never an
// Authorization header (no Ringmaster credential goes upstream), no
// hop-by-hop headers; the client's address and scheme as X-Forwarded-*.
void PrepareRequest(http::request<http::buffer_body>& req, const std::string& peer, bool tls, bool upgrade) {
  DropHopByHop(req, upgrade);
  req.erase(http::field::authorization);
  std::string cookies;
  for (const auto& field : req)
    if (field.name() == http::field::cookie) {
      std::string kept = WithoutCookie(field.value(), kProxyCookie);
      if (kept.empty()) continue;
      if (!cookies.empty()) cookies += "; ";
      cookies += kept;
    }
  req.erase(http::field::cookie);
  if (!cookies.empty()) req.set(http::field::cookie, cookies);
  std::string forwarded(req["X-Forwarded-For"]);
  req.set("X-Forwarded-For", forwarded.empty() ? peer : forwarded + ", " + peer);
  req.set("X-Forwarded-Proto", tls ? "https" : "http");
  if (upgrade) {
    req.set(http::field::connection, "Upgrade");
  } else {
    req.keep_alive(true);
  }
}

// What the browser gets of the task's answer: its headers, minus hop-by-hop
// ones and any Set-Cookie of the proxy's own cookie's name.
void PrepareResponse(http::response<http::buffer_body>& res, bool upgrade) {
  DropHopByHop(res, upgrade);
  std::vector<std::string> kept;
  bool dropped = false;
  for (const auto& field : res)
    if (field.name() == http::field::set_cookie) {
      if (SetsCookie(field.value(), kProxyCookie))
        dropped = true;
      else
        kept.emplace_back(field.value());
    }
  if (dropped) {
    res.erase(http::field::set_cookie);
    for (const auto& c : kept) res.insert(http::field::set_cookie, c);
  }
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
    co_return Status(ErrorCode::kUnavailable,
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

// What becomes of one request: answered by the proxy itself (`reply`), or
// forwarded to `service` on behalf of `grant`.
struct Admission {
  std::optional<http::response<http::string_body>> reply;
  ProxyGrant grant;
  AnnouncedService service;
};

// Decides on a request from its header alone: a one-time link, a path that
// is no task's, a missing or foreign cookie, a user no longer allowed, a
// task without a service, a WebSocket of another origin.
Admission Admit(const ProxySessionContext& ctx, const http::request<http::buffer_body>& req,
                const std::string& peer, bool keep_alive) {
  TaskProxy& proxy = ctx.proxy;
  const unsigned version = req.version();
  const std::string target(req.target());
  auto reply = [&](http::status status, const std::string& title, const std::string& text) {
    Admission a;
    a.reply = Page(status, title, text, version, keep_alive);
    return a;
  };

  // A one-time link: the cookie of its task, then the task's page.
  if (auto ticket = ParseTicketPath(target)) {
    if (req.method() != http::verb::get && req.method() != http::verb::head)
      return reply(http::status::method_not_allowed, "Not allowed", "Open proxy links with GET.");
    auto session = proxy.tickets().Redeem(*ticket, std::chrono::steady_clock::now());
    if (!session.ok())
      return reply(http::status::unauthorized, "Link used or expired",
                   session.status().message() +
                       " (ring task proxy-link ID, or open the service again in the web UI).");
    const int64_t task = session->grant.task_id;
    if (Status allowed = proxy.Allows(session->grant.username, task); !allowed.ok())
      return reply(StatusOf(allowed), "Not allowed", allowed.message());
    Admission out = reply(http::status::see_other, "Opening task " + std::to_string(task),
                          "Go on to /proxy/" + std::to_string(task) + "/.");
    out.reply->set(http::field::location, "/proxy/" + std::to_string(task) + "/");
    out.reply->set(
        http::field::set_cookie,
        SessionCookie(session->cookie, task, proxy.tickets().options().session_ttl.count(), ctx.tls));
    spdlog::info("[proxy] task {}: {} opened a link from {}", task, session->grant.username, peer);
    return out;
  }

  auto path = ParseProxyPath(target);
  if (!path)
    return reply(http::status::not_found, "Not found", "Tasks' services are served under /proxy/<task id>/.");
  const int64_t task = path->task_id;
  const std::string base = "/proxy/" + std::to_string(task) + "/";
  if (!path->slash) {
    Admission out = reply(http::status::permanent_redirect, "Moved", "See " + base + ".");
    const auto query = target.find('?');
    out.reply->set(http::field::location, base + (query == std::string::npos ? "" : target.substr(query)));
    return out;
  }

  // Who: the cookie of this task only. An Authorization header opens nothing here.
  std::optional<ProxyGrant> grant;
  bool other_task = false;
  const auto now = std::chrono::steady_clock::now();
  for (const auto& field : req) {
    if (field.name() != http::field::cookie) continue;
    for (const auto& value : CookieValues(field.value(), kProxyCookie)) {
      auto g = proxy.tickets().Check(value, now);
      if (g && g->task_id == task) grant = g;
      if (g && g->task_id != task) other_task = true;
    }
  }
  if (!grant && other_task)
    return reply(http::status::forbidden, "Not allowed",
                 "Your proxy sign-in is for another task. Open task " + std::to_string(task) +
                     " through Ringmaster to get one for it.");
  if (!grant)
    return reply(http::status::unauthorized, "Sign-in needed",
                 "Open task " + std::to_string(task) +
                     "'s service through Ringmaster (ring task proxy-link " + std::to_string(task) +
                     ", or the web UI): the link signs this browser in to it.");
  if (Status allowed = proxy.Allows(grant->username, task); !allowed.ok())
    return reply(StatusOf(allowed), "Not allowed", allowed.message());
  auto service = proxy.services().Lookup(task);
  if (!service)
    return reply(http::status::bad_gateway, "No service",
                 "Task " + std::to_string(task) +
                     " has announced no service: it may still be starting, or it has ended.");
  if (beast::websocket::is_upgrade(req)) {
    // A WebSocket of another site's page (cross-site WebSocket hijacking) is refused.
    std::string_view origin = req[http::field::origin];
    if (!origin.empty() && origin != proxy.external_url())
      return reply(http::status::forbidden, "Not allowed",
                   "WebSockets are opened only by pages of " + proxy.external_url() + ", not " +
                       std::string(origin) + ".");
  }
  Admission out;
  out.grant = *grant;
  out.service = *service;
  return out;
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
      auto refused = Page(http::status::request_header_fields_too_large, "Request too large",
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
    Admission admitted = Admit(ctx, req, peer, req.keep_alive() && !has_body);
    if (admitted.reply) {
      drain = has_body;
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
      const bool limit = connected.code() == ErrorCode::kUnavailable &&
                         connected.message().find("limit per user") != std::string::npos;
      auto refused =
          Page(limit ? http::status::service_unavailable : http::status::bad_gateway,
               limit ? "Too many connections" : "Service unreachable", connected.message(), version, false);
      drain = has_body;
      co_await WriteOwn(client, std::move(refused));
      break;
    }
    const bool client_keep_alive = req.keep_alive();
    const bool head = req.method() == http::verb::head;
    const bool expects_continue = beast::iequals(req[http::field::expect], "100-continue");
    req.erase(http::field::expect);
    PrepareRequest(req, peer, ctx.tls, upgrade);
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
      auto failed = Page(http::status::bad_gateway, "Service unreachable",
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
    PrepareResponse(res, switching);
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
