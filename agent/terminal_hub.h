#pragma once
// The terminals of this agent's ranks that run in one (Start::terminal: a
// shell task's), and the clients attached to them. The master opens a
// session for each client (proto::TerminalOpen); the hub types the client's
// input into the rank's terminal, resizes it, and sends what the terminal
// shows to every session attached to it, the last 64 KiB first at open, so
// a client that comes back sees where it left. Closing a session leaves the
// rank running; when the rank exits, its sessions are told and forgotten.
// Thread-safe: output arrives on the launcher's threads, the master's
// messages on the link's strand.
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "agent/message_sink.h"
#include "agent/process_launcher.h"
#include "common/agent_protocol.h"

namespace ring {

class TerminalHub {
 public:
  static constexpr size_t kScrollback = 64 * 1024;

  TerminalHub(ProcessLauncher& launcher, MessageSink& sink) : launcher_(launcher), sink_(sink) {}

  // A rank with a terminal was launched as process `pid`.
  void Add(const std::string& allocation_id, int rank, int64_t pid);
  // What its terminal showed.
  void Output(const std::string& allocation_id, int rank, const std::string& bytes);
  // It exited: its sessions end.
  void Remove(const std::string& allocation_id, int rank);
  // TerminalOpen, TerminalInput, TerminalResize or TerminalClose.
  void Handle(const proto::Message& message);

  size_t sessions() const;

 private:
  using Key = std::pair<std::string, int>;  // allocation, rank
  struct Terminal {
    int64_t pid = 0;
    std::string scrollback;
    std::set<std::string> sessions;
  };
  void Close(const std::string& session, const std::string& reason);  // under mutex_

  ProcessLauncher& launcher_;
  MessageSink& sink_;
  mutable std::mutex mutex_;
  std::map<Key, Terminal> terminals_;
  std::map<std::string, Key> sessions_;
};

}  // namespace ring
