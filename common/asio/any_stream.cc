#include "common/asio/any_stream.h"

#include <utility>  // before Asio (std::exchange with g++ 12)

#include <boost/asio/post.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <boost/beast/websocket/teardown.hpp>

namespace ring {

namespace beast = boost::beast;
namespace net = boost::asio;

AnyStream::AnyStream(beast::tcp_stream plain)
    : stream_(std::make_unique<std::variant<beast::tcp_stream, TlsStream>>(std::move(plain))) {}

AnyStream::AnyStream(TlsStream tls)
    : stream_(std::make_unique<std::variant<beast::tcp_stream, TlsStream>>(std::move(tls))) {}

AnyStream::AnyStream(AnyStream&&) noexcept = default;
AnyStream& AnyStream::operator=(AnyStream&&) noexcept = default;
AnyStream::~AnyStream() = default;

AnyStream::executor_type AnyStream::get_executor() noexcept {
  return std::visit([](auto& s) -> executor_type { return s.get_executor(); }, *stream_);
}

beast::tcp_stream& AnyStream::tcp() {
  if (auto* tls = std::get_if<TlsStream>(stream_.get())) return beast::get_lowest_layer(*tls);
  return std::get<beast::tcp_stream>(*stream_);
}

TlsStream* AnyStream::tls() {
  return std::get_if<TlsStream>(stream_.get());
}

void AnyStream::ReadSome(MutableBuffers buffers, IoHandler handler) {
  std::visit([&](auto& s) { s.async_read_some(buffers, std::move(handler)); }, *stream_);
}

void AnyStream::WriteSome(ConstBuffers buffers, IoHandler handler) {
  std::visit([&](auto& s) { s.async_write_some(buffers, std::move(handler)); }, *stream_);
}

void AnyStream::Shutdown(DoneHandler handler) {
  if (auto* tls = this->tls()) {
    tls->async_shutdown(std::move(handler));
    return;
  }
  beast::error_code ec;
  tcp().socket().shutdown(net::ip::tcp::socket::shutdown_send, ec);
  auto executor = handler.get_executor();
  net::post(executor, [handler = std::move(handler), ec]() mutable { handler(ec); });
}

void AnyStream::CloseSocket() {
  beast::close_socket(tcp());
}

void AnyStream::Teardown(beast::role_type role, beast::error_code& ec) {
  using beast::websocket::teardown;
  std::visit([&](auto& s) { teardown(role, s, ec); }, *stream_);
}

void AnyStream::AsyncTeardown(beast::role_type role, DoneHandler handler) {
  using beast::websocket::async_teardown;
  std::visit([&](auto& s) { async_teardown(role, s, std::move(handler)); }, *stream_);
}

}  // namespace ring
