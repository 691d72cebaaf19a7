#pragma once
// Where the agent's outgoing messages (state, log) go. MasterLink is the real
// one; tests record. Send is thread-safe and never blocks.
#include "common/agent_protocol.h"

namespace ring {

class MessageSink {
 public:
  virtual ~MessageSink() = default;
  virtual void Send(proto::Message message) = 0;
};

}  // namespace ring
