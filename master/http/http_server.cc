#include "master/http/http_server.h"

#include <utility>  // before Asio

#include <spdlog/spdlog.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/core/detect_ssl.hpp>
#include <boost/beast/ssl.hpp>

#include "master/http/http_session.h"
#include "master/http/static_files.h"
#include "master/http/tls_server_context.h"

namespace ring {

namespace beast = boost::beast;
namespace net = boost::asio;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;

struct HttpServer::Impl {
  net::io_context& ioc;
  HttpServerOptions options;
  StaticFiles static_files;
  HttpSessionContext session;
  std::shared_ptr<ssl::context> tls;  // set by Start when options name a certificate
  tcp::acceptor acceptor;
  ConnectionCounts counts;  // open connections, from accept to close

  Impl(net::io_context& c, HttpServerOptions o, const Router& r, AgentChannelAcceptor& a)
      : ioc(c),
        options(std::move(o)),
        static_files(options.webui_dir),
        session{options, r, a, static_files},
        acceptor(net::make_strand(c)),
        counts(options.max_connections, options.max_connections_per_address, options.connection_cap_exempt) {}

  net::awaitable<void> Listen();
  // Serves one accepted connection, counted by `ticket` until it ends.
  net::awaitable<void> Serve(tcp::socket socket, ConnectionCounts::Ticket ticket);
  net::awaitable<void> ServeTls(beast::tcp_stream stream, ConnectionCounts::Ticket& ticket);
};

net::awaitable<void> HttpServer::Impl::Serve(tcp::socket socket, ConnectionCounts::Ticket ticket) {
  if (tls) {
    co_await ServeTls(beast::tcp_stream(std::move(socket)), ticket);
    co_return;
  }
  AnyStream stream(beast::tcp_stream(std::move(socket)));
  beast::flat_buffer buffer;
  co_await ServeHttp(session, stream, buffer, ticket);
}

net::awaitable<void> HttpServer::Impl::ServeTls(beast::tcp_stream stream, ConnectionCounts::Ticket& ticket) {
  const std::string& peer = ticket.address();
  // The client speaks first: a TLS ClientHello, or a plain-HTTP request
  // that gets a readable 400 instead of a failed handshake.
  beast::flat_buffer buffer;
  beast::error_code ec;
  stream.expires_after(options.tls_handshake_timeout);
  const bool hello =
      co_await beast::async_detect_ssl(stream, buffer, net::redirect_error(net::use_awaitable, ec));
  if (ec) co_return;  // closed or silent until the deadline
  if (!hello) {
    spdlog::debug("[http] plain HTTP from {} on the HTTPS listener", peer);
    AnyStream plain(std::move(stream));
    co_await RejectPlainHttp(session, plain, buffer);
    co_return;
  }
  TlsStream tls_stream(std::move(stream), *tls);
  beast::get_lowest_layer(tls_stream).expires_after(options.tls_handshake_timeout);
  const auto used = co_await tls_stream.async_handshake(ssl::stream_base::server, buffer.data(),
                                                        net::redirect_error(net::use_awaitable, ec));
  if (ec) {
    spdlog::debug("[http] TLS handshake with {} failed: {}", peer, ec.message());
    co_return;
  }
  buffer.consume(used);
  AnyStream secured(std::move(tls_stream));
  co_await ServeHttp(session, secured, buffer, ticket);
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
    // Answers and agent messages are small writes that must leave at once,
    // not wait for the peer's delayed ACK of the previous one (Nagle).
    socket.set_option(net::ip::tcp::no_delay(true), ec);
    auto executor = socket.get_executor();
    const auto remote = socket.remote_endpoint(ec);
    auto ticket = counts.Open(ec ? std::string("?") : remote.address().to_string());
    net::co_spawn(executor, Serve(std::move(socket), std::move(ticket)), [](std::exception_ptr e) {
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

Status CheckTlsFiles(const std::string& cert_file, const std::string& key_file) {
  return MakeServerTlsContext(cert_file, key_file).status();
}

Result<uint16_t> HttpServer::Start() {
  if (!impl_->options.tls_cert_file.empty() || !impl_->options.tls_key_file.empty()) {
    auto tls = MakeServerTlsContext(impl_->options.tls_cert_file, impl_->options.tls_key_file);
    if (!tls.ok()) return tls.status();
    impl_->tls = *tls;
  }
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

void HttpServer::SetTerminals(TerminalChannelAcceptor* terminals) {
  impl_->session.terminals = terminals;
}

void HttpServer::Stop() {
  net::post(impl_->acceptor.get_executor(), [this] {
    beast::error_code ec;
    impl_->acceptor.close(ec);
  });
}

}  // namespace ring
