#pragma once
// The clients attached to tasks' terminals (`ring shell open`, the web UI's
// terminal) and the agents whose ranks run them (agent/terminal_hub.h).
// Each client gets a session of its own, a random id the master makes and
// binds to the one agent it opened it on: an agent's output or end of a
// session that is not its own is refused, so no agent can write into
// another's terminal. Thread-safe: clients come and go on network threads,
// agents' messages arrive on theirs; a client's callbacks run outside the
// relay's lock, on the agent message's thread.
#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "common/agent_protocol.h"
#include "common/status.h"

namespace ring {

class TerminalRelay {
 public:
  struct Client {
    std::function<void(std::string bytes)> on_output;
    // Once, when the session ends from the agent's side (the shell exited,
    // the agent is gone); never after the client's own Close.
    std::function<void(std::string reason)> on_closed;
  };
  // Sends a message to the agent `agent_id` (its resource manager's link).
  using SendToAgent = std::function<Status(const std::string& agent_id, const proto::Message& message)>;

  explicit TerminalRelay(SendToAgent send) : send_(std::move(send)) {}

  // A session for `client` on the terminal of `allocation_id`'s rank
  // `rank`, which runs on `agent_id`: its id.
  Result<std::string> Open(const std::string& agent_id, const std::string& allocation_id, int rank, int rows,
                           int cols, Client client);
  // From the client. Unknown sessions are ignored.
  void Input(const std::string& session, std::string bytes);
  void Resize(const std::string& session, int rows, int cols);
  void Close(const std::string& session);
  // From an agent: TerminalOutput or TerminalClosed. False (nothing
  // delivered) when the session is not one the master opened on that agent.
  bool FromAgent(const std::string& agent_id, const proto::Message& message);
  // The agent is gone (disconnected, removed): its sessions end.
  void AgentGone(const std::string& agent_id, const std::string& reason);

  size_t sessions() const;
  // Since when no client is attached to `allocation_id`'s terminals: the
  // last session's close, or the first time this is asked; nullopt while
  // one is attached. (A shell's idle timeout counts from it.)
  std::optional<std::chrono::steady_clock::time_point> IdleSince(const std::string& allocation_id,
                                                                 std::chrono::steady_clock::time_point now);
  // The allocation ended: its idle clock goes (its sessions end with its agent's word).
  void Forget(const std::string& allocation_id);

 private:
  struct Session {
    std::string agent_id;
    std::shared_ptr<Client> client;
    std::string allocation_id;
  };
  void Detached(const std::string& allocation_id);  // under mutex_
  Status SendFor(const std::string& session, const proto::Message& message);

  const SendToAgent send_;
  mutable std::mutex mutex_;
  std::map<std::string, Session> sessions_;
  std::map<std::string, std::chrono::steady_clock::time_point> idle_since_;  // by allocation
};

}  // namespace ring
