#pragma once
// Internal to the master's HTTP layer: hands an upgraded connection to the
// agent channel. Includes Beast, so only http_server.cc and the agent channel
// implementation include it.
#include <utility>  // before Asio

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include "common/asio/any_stream.h"

namespace ring {

class AgentChannelAcceptor {
 public:
  virtual ~AgentChannelAcceptor() = default;
  // Takes the connection (plain TCP, or TLS after its handshake) and
  // completes the WebSocket handshake answering `request`.
  virtual void Accept(AnyStream stream,
                      boost::beast::http::request<boost::beast::http::string_body> request) = 0;
};

}  // namespace ring
