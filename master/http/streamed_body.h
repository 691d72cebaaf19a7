#pragma once
// Internal to the master's HTTP layer: writing an answer whose body is a
// BodyStream (ApiResponse::stream) with chunked transfer encoding, one piece
// of at most kStreamPiece bytes at a time. The next piece is produced only
// after the previous one was written, so a slow reader holds one piece (and
// the socket's buffers); a reader that takes no piece for `timeout` is cut
// off. An error of the stream cuts the answer short: no final chunk.
#include <chrono>
#include <cstddef>

#include <utility>  // before Asio

#include <boost/asio/awaitable.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include "common/asio/any_stream.h"
#include "common/body_stream.h"

namespace ring {

inline constexpr size_t kStreamPiece = 64 * 1024;

// Sends `head` (status and header fields; its body is ignored) and then the
// stream's pieces. Returns the write error, or an error when the stream failed.
boost::asio::awaitable<boost::beast::error_code> WriteStreamedAnswer(
    AnyStream& stream, boost::beast::http::response<boost::beast::http::string_body> head, BodyStream& body,
    std::chrono::steady_clock::duration timeout);

}  // namespace ring
