#pragma once
// The client side of a task's terminal (`ring shell open`): the master
// relays it over a WebSocket (docs/interactive.md "Shells") to the agent
// whose rank runs the shell. What is typed goes out as binary frames (the
// local terminal in raw mode, so Ctrl-C and the arrows reach the shell),
// what the shell shows comes back as binary frames, a window resize goes
// out as a text frame {"type": "resize", "rows", "cols"}, and the master's
// text frame {"type": "closed", "reason"} ends the session. Ctrl-] detaches
// (the shell runs on); so does the end of a stdin that is no terminal.
#include <ostream>
#include <string>

#include "common/http_client.h"

namespace ring::cli {

struct TerminalTarget {
  Url master;
  std::string path;  // e.g. /api/v1/shells/12/terminal
  std::string token;
  std::string ca_file;
};

// The detach key: Ctrl-] (as telnet's).
inline constexpr char kDetachKey = '\x1d';

// How a session ended.
enum class TerminalEnd {
  kClosed,    // the master or the agent ended it (the shell exited, it was killed): `reason` says why
  kDetached,  // Ctrl-] or the end of stdin: the shell runs on
  kFailed,    // no connection, or it broke: `reason` says why
};

struct TerminalResult {
  TerminalEnd end = TerminalEnd::kFailed;
  std::string reason;
};

// Connects `in` and `out` (stdin and stdout) to the terminal until the
// session ends; an `in` that is a terminal is put in raw mode for the
// session and restored, and its size (and SIGWINCH's) is the remote one's.
TerminalResult RunTerminal(const TerminalTarget& target, int in = 0, int out = 1);

}  // namespace ring::cli
