#pragma once
// Internal to the master's HTTP layer: hands an upgraded connection to the
// agent channel. Includes Beast, so only http_server.cc and the agent channel
// implementation include it.
#include <utility>  // before Asio

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

namespace ring {

class AgentChannelAcceptor {
 public:
  virtual ~AgentChannelAcceptor() = default;
  // Takes ownership of the socket and completes the WebSocket handshake.
  virtual void Accept(boost::asio::ip::tcp::socket socket,
                      boost::beast::http::request<boost::beast::http::string_body> request) = 0;
  // The same over TLS (wss): the handshake is done, the stream is the session's.
  virtual void Accept(boost::beast::ssl_stream<boost::beast::tcp_stream> stream,
                      boost::beast::http::request<boost::beast::http::string_body> request) = 0;
};

}  // namespace ring
