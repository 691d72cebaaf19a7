#include "master/http/http_session.h"

#include <algorithm>
#include <array>
#include <limits>
#include <optional>

#include <utility>  // before Asio

#include <spdlog/spdlog.h>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket/rfc6455.hpp>

#include "master/http/conditional_get.h"
#include "master/http/content_encoding.h"
#include "master/http/router.h"
#include "master/http/security_headers.h"
#include "master/http/static_files.h"
#include "master/http/streamed_body.h"
#include "master/http/url_codec.h"
#include "master/http/ws_upgrade.h"

namespace ring {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

constexpr auto kTlsShutdownTimeout = std::chrono::seconds(5);
constexpr std::chrono::milliseconds kRefusedReadTimeout{5000};

// The method, path, query and headers of a request (its body is the caller's).
ApiRequest ToApiRequest(const http::request_header<>& req, const std::string& peer, Status& error) {
  ApiRequest out;
  out.method = std::string(req.method_string());
  out.peer = peer;
  std::string_view target = req.target();
  auto q = target.find('?');
  auto path = PercentDecode(target.substr(0, q), false);
  if (!path) {
    error = InvalidArgument("the request path has a malformed percent escape");
    return out;
  }
  out.path = *path;
  if (q != std::string_view::npos) {
    auto query = ParseQuery(target.substr(q + 1));
    if (!query) {
      error = InvalidArgument("the query string has a malformed percent escape");
      return out;
    }
    out.query = std::move(*query);
  }
  for (const auto& field : req) {
    std::string name(field.name_string());
    for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out.headers[name] = std::string(field.value());
  }
  return out;
}

http::response<http::string_body> ToBeast(ApiResponse api, unsigned version, bool keep_alive) {
  http::response<http::string_body> res{static_cast<http::status>(api.status), version};
  res.set(http::field::server, "ringmaster");
  res.set(http::field::content_type, api.content_type);
  for (auto& [k, v] : api.headers) res.set(k, v);
  res.keep_alive(keep_alive);
  res.body() = std::move(api.body);
  res.prepare_payload();
  return res;
}

// Ends the connection from this side: a FIN for TCP; close_notify for TLS
// (waiting a few seconds at most for the client's).
net::awaitable<void> Shutdown(AnyStream& stream) {
  beast::error_code ec;
  stream.tcp().expires_after(kTlsShutdownTimeout);
  co_await stream.async_shutdown(net::redirect_error(net::use_awaitable, ec));
}

// Reads and drops what the client still sends (a body it was told not to
// send), a little and briefly, so closing does not reset the connection
// before the client has read the answer.
net::awaitable<void> Drain(AnyStream& stream) {
  stream.tcp().expires_after(std::chrono::seconds(2));
  std::array<char, 16384> sink;
  size_t drained = 0;
  beast::error_code ec;
  while (!ec && drained < (1u << 20))
    drained +=
        co_await stream.async_read_some(net::buffer(sink), net::redirect_error(net::use_awaitable, ec));
}

// Writes `api` and ends the connection; `drain` when the request's body is
// still unread.
net::awaitable<void> WriteAndClose(AnyStream& stream, ApiResponse api, bool drain) {
  AddSecurityHeaders(api, AnswerKind::kApi);
  auto res = ToBeast(std::move(api), 11, false);
  beast::error_code ec;
  co_await http::async_write(stream, res, net::redirect_error(net::use_awaitable, ec));
  co_await Shutdown(stream);
  if (drain && !ec) co_await Drain(stream);
}

// Writes `status` (a 4xx or 5xx naming the limit) and ends the connection.
net::awaitable<void> WriteAndClose(AnyStream& stream, const Status& status, int http_status) {
  auto api = ApiResponse::Error(status);
  if (http_status) api.status = http_status;
  co_await WriteAndClose(stream, std::move(api), false);
}

Status RefusalStatus(const HttpServerOptions& options, ConnectionRefusal refusal) {
  if (refusal == ConnectionRefusal::kPerAddress)
    return {ErrorCode::kUnavailable,
            "this address has " + std::to_string(options.max_connections_per_address) +
                " open connections, the master's limit per client address (max_connections_per_address); "
                "close some or try again later"};
  return {ErrorCode::kUnavailable, "the master is at its limit of " +
                                       std::to_string(options.max_connections) +
                                       " open connections; try again later"};
}

net::awaitable<http::response<http::string_body>> Handle(const HttpSessionContext& ctx,
                                                         http::request<http::string_body>& req,
                                                         const std::string& peer,
                                                         std::shared_ptr<BodyStream>& stream) {
  Status parse_error;
  ApiRequest api = ToApiRequest(req, peer, parse_error);
  api.body = std::move(req.body());
  ApiResponse response;
  bool page = false;
  if (!parse_error.ok()) {
    response = ApiResponse::Error(parse_error);
  } else if (api.path.rfind("/api/", 0) == 0 || api.path == "/metrics") {
    try {
      response = co_await ctx.router.Dispatch(api);
    } catch (const std::exception& e) {
      spdlog::error("[http] {} {} failed: {}", api.method, api.path, e.what());
      response = ApiResponse::Error(Internal("internal error while handling the request"));
    }
  } else if (api.method == "GET" || api.method == "HEAD") {
    response = ctx.static_files.Serve(api.path);
    page = response.status == 200;
  } else {
    response = ApiResponse::Error(NotFound("no such endpoint: " + api.method + " " + api.path));
  }
  stream = std::move(response.stream);
  if (parse_error.ok() && !stream) {
    ApplyContentEncoding(api, response);  // the gzip body of a cached answer
    ApplyConditionalGet(api, response);   // ETag, 304 when unchanged
  }
  AddSecurityHeaders(response, page ? AnswerKind::kPage : AnswerKind::kApi);
  co_return ToBeast(std::move(response), req.version(), req.keep_alive());
}

}  // namespace

net::awaitable<void> ServeHttp(const HttpSessionContext& ctx, AnyStream& stream, beast::flat_buffer& buffer,
                               ConnectionCounts::Ticket& ticket) {
  const HttpServerOptions& options = ctx.options;
  const std::string& peer = ticket.address();
  auto& tcp_stream = stream.tcp();
  for (bool first = true;; first = false) {
    http::request_parser<http::string_body> parser;
    parser.header_limit(options.header_limit);
    // Beast compares a Content-Length with the body limit as soon as the
    // header is parsed (its default is 1 MiB): lift it for the header and
    // apply the route's own limit below, with a 413 instead of a dropped
    // connection. (Not boost::none: Beast 1.74 then refuses every body.)
    parser.body_limit(std::numeric_limits<uint64_t>::max());
    // A connection over a limit waits only briefly for the request that
    // shows whether it is an agent's.
    const bool refused = first && ticket.refusal() != ConnectionRefusal::kNone;
    tcp_stream.expires_after(
        refused ? std::min<std::chrono::milliseconds>(options.read_timeout, kRefusedReadTimeout)
                : options.read_timeout);
    beast::error_code hec;
    auto hn = co_await http::async_read_header(stream, buffer, parser,
                                               net::redirect_error(net::use_awaitable, hec));
    (void)hn;
    if (hec == http::error::header_limit) {
      co_await WriteAndClose(stream,
                             {ErrorCode::kTooLarge, "request header fields are over the limit of " +
                                                        std::to_string(options.header_limit) + " bytes"},
                             431);
      co_return;
    }
    if (hec) break;  // closed, timed out or malformed header: drop the connection
    const auto& header = parser.get();
    // Agents' channels are counted apart from users' connections and let in
    // whatever users hold; their cluster token is checked below.
    const bool agent_channel = header.target() == "/api/v1/agents/ws" && beast::websocket::is_upgrade(header);
    // An agent enrols just before its first upgrade, on the same connection:
    // that request is an agent's too. Its route checks the cluster token; a
    // refused enrolment closes the connection, so nothing else rides on it.
    const bool enrolment = header.method() == http::verb::post && header.target() == "/api/v1/agents/enrol";
    if (agent_channel || enrolment) {
      ticket.BecomeAgent();
    } else if (refused) {
      co_await WriteAndClose(stream, ApiResponse::Error(RefusalStatus(options, ticket.refusal())),
                             parser.content_length().value_or(0) > 0 || parser.chunked());
      co_return;
    }
    const bool upload = header.method() == http::verb::post && header.target() == "/api/v1/experiments";
    const uint64_t body_limit = upload ? options.upload_body_limit : options.body_limit;
    parser.body_limit(body_limit);
    beast::error_code bec;
    const bool has_body = parser.content_length().value_or(0) > 0 || parser.chunked();
    if (has_body && header.target().substr(0, 5) == "/api/") {
      // The caller must be let in before its body is read: a client without
      // a token cannot make the master take in megabytes.
      Status parse_error;
      ApiRequest api = ToApiRequest(header, peer, parse_error);
      std::optional<ApiResponse> refusal = parse_error.ok()
                                               ? ctx.router.Admit(api)
                                               : std::optional<ApiResponse>(ApiResponse::Error(parse_error));
      if (refusal) {
        co_await WriteAndClose(stream, std::move(*refusal), true);
        co_return;
      }
    }
    if (parser.content_length() && *parser.content_length() > body_limit) {
      bec = http::error::body_limit;
    } else {
      auto bn =
          co_await http::async_read(stream, buffer, parser, net::redirect_error(net::use_awaitable, bec));
      (void)bn;
    }
    if (bec == http::error::body_limit) {
      co_await WriteAndClose(stream,
                             {ErrorCode::kTooLarge,
                              "request body is over the limit of " + std::to_string(body_limit) + " bytes"},
                             0);
      co_return;
    }
    if (bec) break;
    auto req = parser.release();
    if (beast::websocket::is_upgrade(req)) {
      if (agent_channel) {
        // The agent's id and credential are checked before the upgrade: a
        // refusal is a 401 and never reaches (or disturbs) a live connection.
        auto agent_id = ctx.agents.Admit(req, peer);
        if (!agent_id.ok()) {
          co_await WriteAndClose(stream, agent_id.status(), 0);
          co_return;
        }
        tcp_stream.expires_never();
        ctx.agents.Accept(std::move(stream), std::move(req), *agent_id);  // the agent channel's from here
        co_return;
      }
      if (ctx.terminals && ctx.terminals->Handles(req.target())) {
        auto admission = ctx.terminals->Admit(req, peer);
        if (!admission.ok()) {
          co_await WriteAndClose(stream, admission.status(), 0);
          co_return;
        }
        tcp_stream.expires_never();
        ctx.terminals->Accept(std::move(stream), std::move(req), std::move(*admission));
        co_return;
      }
      auto res =
          ToBeast(ApiResponse::Error(NotFound("no WebSocket endpoint at " + std::string(req.target()))),
                  req.version(), false);
      {
        beast::error_code wec;
        co_await http::async_write(stream, res, net::redirect_error(net::use_awaitable, wec));
      }
      break;
    }
    bool keep_alive = req.keep_alive();
    std::shared_ptr<BodyStream> body_stream;
    auto res = co_await Handle(ctx, req, peer, body_stream);
    if (enrolment && res.result() != http::status::created) {
      keep_alive = false;
      res.keep_alive(false);
    }
    tcp_stream.expires_after(options.read_timeout);
    beast::error_code wec;
    if (body_stream) {
      wec = co_await WriteStreamedAnswer(stream, std::move(res), *body_stream, options.read_timeout);
      body_stream.reset();  // frees its slot before the next request
    } else {
      auto wn = co_await http::async_write(stream, res, net::redirect_error(net::use_awaitable, wec));
      (void)wn;
    }
    if (wec || !keep_alive) break;
  }
  co_await Shutdown(stream);
}

net::awaitable<void> RejectPlainHttp(const HttpSessionContext& ctx, AnyStream& stream,
                                     beast::flat_buffer& buffer) {
  // Read the request's header first (bounded in size and time), so closing
  // does not reset the connection before the client reads the answer.
  http::request_parser<http::empty_body> parser;
  parser.header_limit(ctx.options.header_limit);
  stream.tcp().expires_after(std::chrono::seconds(5));
  beast::error_code ec;
  co_await http::async_read_header(stream, buffer, parser, net::redirect_error(net::use_awaitable, ec));
  co_await WriteAndClose(stream,
                         InvalidArgument("this master serves HTTPS only: use an https:// URL (and --ca-file "
                                         "or RING_CA_FILE when its certificate has a private CA)"),
                         400);
}

}  // namespace ring
