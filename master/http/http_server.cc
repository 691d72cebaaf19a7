#include "master/http/http_server.h"

#include <atomic>
#include <limits>

#include <utility>  // before Asio

#include <spdlog/spdlog.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket/rfc6455.hpp>

#include "master/http/conditional_get.h"
#include "master/http/router.h"
#include "master/http/static_files.h"
#include "master/http/url_codec.h"
#include "master/http/ws_upgrade.h"

namespace ring {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

struct HttpServer::Impl {
  net::io_context& ioc;
  HttpServerOptions options;
  const Router& router;
  AgentChannelAcceptor& agents;
  StaticFiles static_files;
  tcp::acceptor acceptor;
  std::atomic<uint32_t> connections{0};  // open, counted from accept to close

  Impl(net::io_context& c, HttpServerOptions o, const Router& r, AgentChannelAcceptor& a)
      : ioc(c),
        options(std::move(o)),
        router(r),
        agents(a),
        static_files(options.webui_dir),
        acceptor(net::make_strand(c)) {}

  net::awaitable<void> Listen();
  net::awaitable<void> Serve(tcp::socket socket);
  net::awaitable<void> Refuse(tcp::socket socket);
  net::awaitable<http::response<http::string_body>> Handle(http::request<http::string_body>& req,
                                                           const std::string& peer);
};

namespace {

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

// Equal, in time that does not depend on where they differ.
bool TokensEqual(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

// Writes `status` (a 4xx or 5xx naming the limit) and ends the connection.
net::awaitable<void> WriteAndClose(beast::tcp_stream& stream, const Status& status, int http_status) {
  auto api = ApiResponse::Error(status);
  if (http_status) api.status = http_status;
  auto res = ToBeast(std::move(api), 11, false);
  beast::error_code ec;
  co_await http::async_write(stream, res, net::redirect_error(net::use_awaitable, ec));
  stream.socket().shutdown(tcp::socket::shutdown_send, ec);
}

}  // namespace

net::awaitable<http::response<http::string_body>> HttpServer::Impl::Handle(
    http::request<http::string_body>& req, const std::string& peer) {
  Status parse_error;
  ApiRequest api = ToApiRequest(req, peer, parse_error);
  ApiResponse response;
  if (!parse_error.ok()) {
    response = ApiResponse::Error(parse_error);
  } else if (api.path.rfind("/api/", 0) == 0 || api.path == "/metrics") {
    try {
      response = co_await router.Dispatch(api);
    } catch (const std::exception& e) {
      spdlog::error("[http] {} {} failed: {}", api.method, api.path, e.what());
      response = ApiResponse::Error(Internal("internal error while handling the request"));
    }
  } else if (api.method == "GET" || api.method == "HEAD") {
    response = static_files.Serve(api.path);
  } else {
    response = ApiResponse::Error(NotFound("no such endpoint: " + api.method + " " + api.path));
  }
  if (parse_error.ok()) ApplyConditionalGet(api, response);  // ETag, 304 when unchanged
  co_return ToBeast(std::move(response), req.version(), req.keep_alive());
}

net::awaitable<void> HttpServer::Impl::Serve(tcp::socket socket) {
  beast::error_code ec;
  const auto remote = socket.remote_endpoint(ec);
  const std::string peer = ec ? std::string("?") : remote.address().to_string();
  beast::tcp_stream stream(std::move(socket));
  beast::flat_buffer buffer;
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.header_limit(options.header_limit);
    // Beast compares a Content-Length with the body limit as soon as the
    // header is parsed (its default is 1 MiB): lift it for the header and
    // apply the route's own limit below, with a 413 instead of a dropped
    // connection. (Not boost::none: Beast 1.74 then refuses every body.)
    parser.body_limit(std::numeric_limits<uint64_t>::max());
    stream.expires_after(options.read_timeout);
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
        const auto auth = req[http::field::authorization];
        const std::string_view prefix = "Bearer ";
        const bool presented = auth.size() > prefix.size() && auth.substr(0, prefix.size()) == prefix;
        if (options.agent_token.empty() || !presented ||
            !TokensEqual(auth.substr(prefix.size()), options.agent_token)) {
          spdlog::warn("[http] agent connection from {} refused: {} cluster token", peer,
                       presented ? "wrong" : "no");
          co_await WriteAndClose(
              stream,
              {ErrorCode::kUnauthenticated,
               std::string(presented ? "wrong" : "no") +
                   " cluster token: agents present the token of the master's cluster token "
                   "file (ringagent --token-file FILE)"},
              0);
          co_return;
        }
        stream.expires_never();
        agents.Accept(stream.release_socket(), std::move(req));
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
    auto res = co_await Handle(req, peer);
    stream.expires_after(options.read_timeout);
    beast::error_code wec;
    auto wn = co_await http::async_write(stream, res, net::redirect_error(net::use_awaitable, wec));
    (void)wn;
    if (wec || !keep_alive) break;
  }
  stream.socket().shutdown(tcp::socket::shutdown_send, ec);
}

net::awaitable<void> HttpServer::Impl::Refuse(tcp::socket socket) {
  beast::tcp_stream stream(std::move(socket));
  stream.expires_after(std::chrono::seconds(5));
  // Read what the client sent first (up to a few KiB), so closing does not
  // reset the connection before it reads the answer.
  beast::error_code ec;
  char scratch[4096];
  co_await stream.async_read_some(net::buffer(scratch), net::redirect_error(net::use_awaitable, ec));
  co_await WriteAndClose(
      stream,
      {ErrorCode::kUnavailable, "the master is at its limit of " + std::to_string(options.max_connections) +
                                    " open connections; try again later"},
      503);
}

net::awaitable<void> HttpServer::Impl::Listen() {
  for (;;) {
    beast::error_code ec;
    auto socket =
        co_await acceptor.async_accept(net::make_strand(ioc), net::redirect_error(net::use_awaitable, ec));
    if (ec) {
      if (ec == net::error::operation_aborted || !acceptor.is_open()) co_return;
      spdlog::warn("[http] accept failed: {}", ec.message());
      continue;
    }
    auto executor = socket.get_executor();
    if (connections.fetch_add(1) >= options.max_connections) {
      net::co_spawn(executor, Refuse(std::move(socket)),
                    [this](std::exception_ptr) { connections.fetch_sub(1); });
      continue;
    }
    net::co_spawn(executor, Serve(std::move(socket)), [this](std::exception_ptr e) {
      connections.fetch_sub(1);
      if (!e) return;
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& ex) {
        spdlog::warn("[http] connection ended with an error: {}", ex.what());
      }
    });
  }
}

HttpServer::HttpServer(net::io_context& ioc, HttpServerOptions options, const Router& router,
                       AgentChannelAcceptor& agents)
    : impl_(std::make_unique<Impl>(ioc, std::move(options), router, agents)) {}

HttpServer::~HttpServer() = default;

Result<uint16_t> HttpServer::Start() {
  beast::error_code ec;
  auto address = net::ip::make_address(impl_->options.host, ec);
  if (ec) return InvalidArgument("listen address \"" + impl_->options.host + "\" is not an IP address");
  tcp::endpoint endpoint(address, impl_->options.port);
  auto& acceptor = impl_->acceptor;
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec)
    return Unavailable("cannot listen on " + impl_->options.host + ":" + std::to_string(impl_->options.port) +
                       ": " + ec.message());
  const uint16_t port = acceptor.local_endpoint().port();
  net::co_spawn(acceptor.get_executor(), impl_->Listen(), net::detached);
  return port;
}

void HttpServer::Stop() {
  net::post(impl_->acceptor.get_executor(), [this] {
    beast::error_code ec;
    impl_->acceptor.close(ec);
  });
}

}  // namespace ring
