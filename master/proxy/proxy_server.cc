#include "master/proxy/proxy_server.h"

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
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "master/http/connection_counts.h"
#include "master/http/tls_server_context.h"
#include "master/proxy/proxy_session.h"
#include "master/proxy/task_proxy.h"

namespace ring {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;

struct ProxyServer::Impl {
  net::io_context& ioc;
  ProxyServerOptions options;
  TaskProxy& proxy;
  std::shared_ptr<ssl::context> tls;  // set by Start when options name a certificate
  ProxySessionContext session;
  tcp::acceptor acceptor;
  ConnectionCounts counts;

  Impl(net::io_context& c, ProxyServerOptions o, TaskProxy& p)
      : ioc(c),
        options(std::move(o)),
        proxy(p),
        session{options, proxy},
        acceptor(net::make_strand(c)),
        counts(options.max_connections, options.max_connections_per_address) {}

  net::awaitable<void> Listen();
  net::awaitable<void> Serve(tcp::socket socket, ConnectionCounts::Ticket ticket);
};

net::awaitable<void> ProxyServer::Impl::Serve(tcp::socket socket, ConnectionCounts::Ticket ticket) {
  beast::tcp_stream plain(std::move(socket));
  beast::flat_buffer buffer;
  std::optional<AnyStream> stream;
  if (tls) {
    TlsStream secured(std::move(plain), *tls);
    beast::get_lowest_layer(secured).expires_after(options.tls_handshake_timeout);
    beast::error_code ec;
    co_await secured.async_handshake(ssl::stream_base::server, net::redirect_error(net::use_awaitable, ec));
    if (ec) {
      spdlog::debug("[proxy] TLS handshake with {} failed: {}", ticket.address(), ec.message());
      co_return;
    }
    stream.emplace(std::move(secured));
  } else {
    stream.emplace(std::move(plain));
  }
  if (ticket.refusal() != ConnectionRefusal::kNone) {
    // Over the listener's limits: a short answer naming them, then closed.
    http::response<http::string_body> res{http::status::service_unavailable, 11};
    res.set(http::field::content_type, "text/plain; charset=utf-8");
    res.body() =
        "The task proxy is at its limit of open connections (max_connections, "
        "max_connections_per_address); try again later.\n";
    res.keep_alive(false);
    res.prepare_payload();
    beast::error_code ec;
    stream->tcp().expires_after(std::chrono::seconds(5));
    co_await http::async_write(*stream, res, net::redirect_error(net::use_awaitable, ec));
    co_await stream->async_shutdown(net::redirect_error(net::use_awaitable, ec));
    co_return;
  }
  co_await ServeProxy(session, *stream, buffer, ticket.address());
}

net::awaitable<void> ProxyServer::Impl::Listen() {
  for (;;) {
    beast::error_code ec;
    auto socket =
        co_await acceptor.async_accept(net::make_strand(ioc), net::redirect_error(net::use_awaitable, ec));
    if (ec) {
      if (ec == net::error::operation_aborted || !acceptor.is_open()) co_return;
      spdlog::warn("[proxy] accept failed: {}", ec.message());
      continue;
    }
    socket.set_option(tcp::no_delay(true), ec);
    auto executor = socket.get_executor();
    const auto remote = socket.remote_endpoint(ec);
    auto ticket = counts.Open(ec ? std::string("?") : remote.address().to_string());
    net::co_spawn(executor, Serve(std::move(socket), std::move(ticket)), [](std::exception_ptr e) {
      if (!e) return;
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& ex) {
        spdlog::warn("[proxy] connection ended with an error: {}", ex.what());
      }
    });
  }
}

ProxyServer::ProxyServer(net::io_context& ioc, ProxyServerOptions options, TaskProxy& proxy)
    : impl_(std::make_unique<Impl>(ioc, std::move(options), proxy)) {}

ProxyServer::~ProxyServer() = default;

Result<uint16_t> ProxyServer::Start() {
  auto& o = impl_->options;
  if (!o.tls_cert_file.empty() || !o.tls_key_file.empty()) {
    auto tls = MakeServerTlsContext(o.tls_cert_file, o.tls_key_file);
    if (!tls.ok()) return tls.status();
    impl_->tls = *tls;
    impl_->session.tls = true;
  }
  beast::error_code ec;
  auto address = net::ip::make_address(o.host, ec);
  if (ec) return InvalidArgument("proxy.listen: \"" + o.host + "\" is not an IP address");
  tcp::endpoint endpoint(address, o.port);
  auto& acceptor = impl_->acceptor;
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec)
    return Unavailable("proxy.listen: cannot listen on " + o.host + ":" + std::to_string(o.port) + ": " +
                       ec.message());
  const uint16_t port = acceptor.local_endpoint().port();
  net::co_spawn(acceptor.get_executor(), impl_->Listen(), net::detached);
  return port;
}

void ProxyServer::Stop() {
  net::post(impl_->acceptor.get_executor(), [this] {
    beast::error_code ec;
    impl_->acceptor.close(ec);
  });
}

}  // namespace ring
