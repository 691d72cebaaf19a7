#pragma once
// Internal to the master's HTTP layer: hands an upgraded connection to the
// agent channel. Includes Beast, so only http_server.cc and the agent channel
// implementation include it.
#include <utility>  // before Asio

#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

namespace ring {

class AgentChannelAcceptor {
 public:
  virtual ~AgentChannelAcceptor() = default;
  // Takes ownership of the stream and completes the WebSocket handshake.
  virtual void Accept(boost::beast::tcp_stream stream,
                      boost::beast::http::request<boost::beast::http::string_body> request) = 0;
};

}  // namespace ring
