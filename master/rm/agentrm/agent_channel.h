#pragma once
// The master's end of one agent's connection. The WebSocket implementation
// lives in master/http/agent_ws_session.cc; tests use a recording fake.
#include <string>

namespace ring {

class AgentChannel {
 public:
  virtual ~AgentChannel() = default;
  // Queues one JSON frame; thread-safe, never blocks.
  virtual void Send(std::string frame) = 0;
  // Closes the connection (e.g. a duplicate agent id).
  virtual void Close(std::string reason) = 0;
};

}  // namespace ring
