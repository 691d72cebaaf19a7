#pragma once
// Internal to the master's HTTP layer: hands an upgraded connection to the
// agent channel. Includes Beast, so only http_server.cc and the agent channel
// implementation include it.
#include <utility>  // before Asio

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

namespace ring {

class AgentChannelAcceptor {
 public:
  virtual ~AgentChannelAcceptor() = default;
  // Takes ownership of the socket and completes the WebSocket handshake.
  virtual void Accept(boost::asio::ip::tcp::socket socket,
                      boost::beast::http::request<boost::beast::http::string_body> request) = 0;
};

}  // namespace ring
