#include "master/http/http_session.h"

#include <limits>

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
#include "master/http/static_files.h"
#include "master/http/url_codec.h"
#include "master/http/ws_upgrade.h"

namespace ring {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

constexpr auto kTlsShutdownTimeout = std::chrono::seconds(5);

ApiRequest ToApiRequest(const http::request<http::string_body>& req, const std::string& peer, Status& error) {
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
  out.body = req.body();
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

// Writes `status` (a 4xx or 5xx naming the limit) and ends the connection.
net::awaitable<void> WriteAndClose(AnyStream& stream, const Status& status, int http_status) {
  auto api = ApiResponse::Error(status);
  if (http_status) api.status = http_status;
  auto res = ToBeast(std::move(api), 11, false);
  beast::error_code ec;
  co_await http::async_write(stream, res, net::redirect_error(net::use_awaitable, ec));
  co_await Shutdown(stream);
}

net::awaitable<http::response<http::string_body>> Handle(const HttpSessionContext& ctx,
                                                         http::request<http::string_body>& req,
                                                         const std::string& peer) {
  Status parse_error;
  ApiRequest api = ToApiRequest(req, peer, parse_error);
  ApiResponse response;
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
  } else {
    response = ApiResponse::Error(NotFound("no such endpoint: " + api.method + " " + api.path));
  }
  if (parse_error.ok()) {
    ApplyContentEncoding(api, response);  // the gzip body of a cached answer
    ApplyConditionalGet(api, response);   // ETag, 304 when unchanged
  }
  co_return ToBeast(std::move(response), req.version(), req.keep_alive());
}

}  // namespace

net::awaitable<void> ServeHttp(const HttpSessionContext& ctx, AnyStream& stream, beast::flat_buffer& buffer,
                               std::string peer) {
  const HttpServerOptions& options = ctx.options;
  auto& tcp_stream = stream.tcp();
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.header_limit(options.header_limit);
    // Beast compares a Content-Length with the body limit as soon as the
    // header is parsed (its default is 1 MiB): lift it for the header and
    // apply the route's own limit below, with a 413 instead of a dropped
    // connection. (Not boost::none: Beast 1.74 then refuses every body.)
    parser.body_limit(std::numeric_limits<uint64_t>::max());
    tcp_stream.expires_after(options.read_timeout);
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
    const bool upload = header.method() == http::verb::post && header.target() == "/api/v1/experiments";
    const uint64_t body_limit = upload ? options.upload_body_limit : options.body_limit;
    parser.body_limit(body_limit);
    beast::error_code bec;
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
      if (req.target() == "/api/v1/agents/ws") {
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
      auto res =
          ToBeast(ApiResponse::Error(NotFound("no WebSocket endpoint at " + std::string(req.target()))),
                  req.version(), false);
      {
        beast::error_code wec;
        co_await http::async_write(stream, res, net::redirect_error(net::use_awaitable, wec));
      }
      break;
    }
    const bool keep_alive = req.keep_alive();
    auto res = co_await Handle(ctx, req, peer);
    tcp_stream.expires_after(options.read_timeout);
    beast::error_code wec;
    auto wn = co_await http::async_write(stream, res, net::redirect_error(net::use_awaitable, wec));
    (void)wn;
    if (wec || !keep_alive) break;
  }
  co_await Shutdown(stream);
}

net::awaitable<void> RefuseHttp(const HttpSessionContext& ctx, AnyStream& stream,
                                beast::flat_buffer& buffer) {
  stream.tcp().expires_after(std::chrono::seconds(5));
  // Read what the client sent first (up to a few KiB), so closing does not
  // reset the connection before it reads the answer.
  beast::error_code ec;
  if (buffer.size() == 0) {
    co_await stream.async_read_some(buffer.prepare(4096), net::redirect_error(net::use_awaitable, ec));
  }
  co_await WriteAndClose(stream,
                         {ErrorCode::kUnavailable, "the master is at its limit of " +
                                                       std::to_string(ctx.options.max_connections) +
                                                       " open connections; try again later"},
                         503);
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
