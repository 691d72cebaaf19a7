#include "master/http/streamed_body.h"

#include <vector>

#include <spdlog/spdlog.h>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace ring {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;

net::awaitable<beast::error_code> WriteStreamedAnswer(AnyStream& stream,
                                                      http::response<http::string_body> head,
                                                      BodyStream& body,
                                                      std::chrono::steady_clock::duration timeout) {
  http::response<http::buffer_body> res{std::move(head.base())};
  res.erase(http::field::content_length);
  res.chunked(true);
  res.body().data = nullptr;
  res.body().more = true;
  http::response_serializer<http::buffer_body> sr{res};
  beast::error_code ec;
  stream.tcp().expires_after(timeout);
  co_await http::async_write_header(stream, sr, net::redirect_error(net::use_awaitable, ec));
  if (ec) co_return ec;
  std::vector<char> piece(kStreamPiece);
  for (;;) {
    auto n = body.Read(piece.data(), piece.size());
    if (!n.ok()) {
      spdlog::warn("[http] a streamed answer was cut short: {}", n.status().message());
      co_return beast::error_code(net::error::operation_aborted);
    }
    if (*n == 0) {
      res.body().data = nullptr;
      res.body().size = 0;
      res.body().more = false;
    } else {
      res.body().data = piece.data();
      res.body().size = *n;
      res.body().more = true;
    }
    stream.tcp().expires_after(timeout);
    co_await http::async_write(stream, sr, net::redirect_error(net::use_awaitable, ec));
    if (ec == http::error::need_buffer) ec = {};
    if (ec) co_return ec;
    if (*n == 0) co_return ec;
  }
}

}  // namespace ring
