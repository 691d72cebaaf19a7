#pragma once
// Internal to the master's HTTP layer: hands an upgraded connection to the
// agent channel. Includes Beast, so only http_server.cc and the agent channel
// implementation include it.
#include <utility>  // before Asio

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <string>
#include <string_view>

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

// What a user's WebSocket to a task's terminal opens, once admitted: the
// agent that runs it, the allocation and rank, the first size.
struct TerminalAdmission {
  std::string username;
  std::string agent_id;
  std::string allocation_id;
  int rank = 0;
  int rows = 24;
  int cols = 80;
};

// Users' WebSockets to their tasks' terminals (docs/interactive.md
// "Shells"): counted as users' connections, authenticated before the
// upgrade like any request.
class TerminalChannelAcceptor {
 public:
  virtual ~TerminalChannelAcceptor() = default;
  // Whether `target` is a terminal's endpoint (its query included).
  virtual bool Handles(std::string_view target) const = 0;
  // Before the upgrade: what the request opens, or an error answered as it
  // says (401 unauthenticated, 403 another user's task, 404, 409 not running).
  virtual Result<TerminalAdmission> Admit(
      const boost::beast::http::request<boost::beast::http::string_body>& request,
      const std::string& peer) = 0;
  // Takes the connection and completes the WebSocket handshake.
  virtual void Accept(AnyStream stream, boost::beast::http::request<boost::beast::http::string_body> request,
                      TerminalAdmission admission) = 0;
};

}  // namespace ring
