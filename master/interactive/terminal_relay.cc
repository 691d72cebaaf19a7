#include "master/interactive/terminal_relay.h"

#include <openssl/rand.h>

#include <vector>

namespace ring {
namespace {

std::string NewSessionId() {
  unsigned char bytes[16];
  RAND_bytes(bytes, sizeof bytes);
  static const char* const kHex = "0123456789abcdef";
  std::string id;
  for (unsigned char b : bytes) {
    id += kHex[b >> 4];
    id += kHex[b & 15];
  }
  return id;
}

}  // namespace

Result<std::string> TerminalRelay::Open(const std::string& agent_id, const std::string& allocation_id,
                                        int rank, int rows, int cols, Client client) {
  const std::string session = NewSessionId();
  {
    std::lock_guard lock(mutex_);
    sessions_[session] = Session{agent_id, std::make_shared<Client>(std::move(client)), allocation_id};
  }
  // Registered first: the agent's answer (the scrollback) may come at once.
  Status sent = send_(agent_id, proto::TerminalOpen{allocation_id, rank, session, rows, cols});
  if (!sent.ok()) {
    std::lock_guard lock(mutex_);
    sessions_.erase(session);
    Detached(allocation_id);
    return sent;
  }
  return session;
}

Status TerminalRelay::SendFor(const std::string& session, const proto::Message& message) {
  std::string agent_id;
  {
    std::lock_guard lock(mutex_);
    auto it = sessions_.find(session);
    if (it == sessions_.end()) return NotFound("no terminal session " + session);
    agent_id = it->second.agent_id;
  }
  return send_(agent_id, message);
}

void TerminalRelay::Input(const std::string& session, std::string bytes) {
  (void)SendFor(session, proto::TerminalInput{session, std::move(bytes)});
}

void TerminalRelay::Resize(const std::string& session, int rows, int cols) {
  (void)SendFor(session, proto::TerminalResize{session, rows, cols});
}

void TerminalRelay::Close(const std::string& session) {
  std::string agent_id;
  {
    std::lock_guard lock(mutex_);
    auto it = sessions_.find(session);
    if (it == sessions_.end()) return;
    agent_id = it->second.agent_id;
    const std::string allocation = it->second.allocation_id;
    sessions_.erase(it);
    Detached(allocation);
  }
  (void)send_(agent_id, proto::TerminalClose{session});
}

bool TerminalRelay::FromAgent(const std::string& agent_id, const proto::Message& message) {
  const auto* output = std::get_if<proto::TerminalOutput>(&message);
  const auto* closed = std::get_if<proto::TerminalClosed>(&message);
  if (!output && !closed) return false;
  const std::string& session = output ? output->session : closed->session;
  std::shared_ptr<Client> client;
  {
    std::lock_guard lock(mutex_);
    auto it = sessions_.find(session);
    if (it == sessions_.end() || it->second.agent_id != agent_id) return false;
    client = it->second.client;
    if (closed) {
      const std::string allocation = it->second.allocation_id;
      sessions_.erase(it);
      Detached(allocation);
    }
  }
  if (output && client->on_output) client->on_output(output->data);
  if (closed && client->on_closed) client->on_closed(closed->reason);
  return true;
}

void TerminalRelay::AgentGone(const std::string& agent_id, const std::string& reason) {
  std::vector<std::shared_ptr<Client>> ended;
  {
    std::lock_guard lock(mutex_);
    for (auto it = sessions_.begin(); it != sessions_.end();) {
      if (it->second.agent_id == agent_id) {
        ended.push_back(it->second.client);
        const std::string allocation = it->second.allocation_id;
        it = sessions_.erase(it);
        Detached(allocation);
      } else {
        ++it;
      }
    }
  }
  for (const auto& client : ended)
    if (client->on_closed) client->on_closed(reason);
}

void TerminalRelay::Detached(const std::string& allocation_id) {
  for (const auto& [id, s] : sessions_)
    if (s.allocation_id == allocation_id) return;  // another client is still attached
  idle_since_[allocation_id] = std::chrono::steady_clock::now();
}

std::optional<std::chrono::steady_clock::time_point> TerminalRelay::IdleSince(
    const std::string& allocation_id, std::chrono::steady_clock::time_point now) {
  std::lock_guard lock(mutex_);
  for (const auto& [id, s] : sessions_)
    if (s.allocation_id == allocation_id) return std::nullopt;
  return idle_since_.emplace(allocation_id, now).first->second;
}

void TerminalRelay::Forget(const std::string& allocation_id) {
  std::lock_guard lock(mutex_);
  idle_since_.erase(allocation_id);
}

size_t TerminalRelay::sessions() const {
  std::lock_guard lock(mutex_);
  return sessions_.size();
}

}  // namespace ring
