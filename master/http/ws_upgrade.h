#pragma once
// Internal to the master's HTTP layer: hands an upgraded connection to the
// agent channel. Includes Beast, so only http_server.cc and the agent channel
// implementation include it.
#include <utility>  // before Asio

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <string>

#include "common/asio/any_stream.h"
#include "common/status.h"

namespace ring {

class AgentChannelAcceptor {
 public:
  virtual ~AgentChannelAcceptor() = default;
  // Before the upgrade: the agent id that `request`'s headers authenticate,
  // or kUnauthenticated (answered 401, nothing else happens).
  virtual Result<std::string> Admit(
      const boost::beast::http::request<boost::beast::http::string_body>& request,
      const std::string& peer) = 0;
  // Takes the connection (plain TCP, or TLS after its handshake) of the
  // admitted `agent_id` and completes the WebSocket handshake answering
  // `request`.
  virtual void Accept(AnyStream stream, boost::beast::http::request<boost::beast::http::string_body> request,
                      std::string agent_id) = 0;
};

}  // namespace ring
