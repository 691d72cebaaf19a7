#pragma once
// Runs a short command to its end through a ProcessLauncher and returns its
// exit and output: what the agent uses to ask a container runtime about
// itself, its images, and to stop and remove containers. Blocks the calling
// thread (a worker thread, or the agent's start) until the command ends or
// `timeout` passes, when it is killed and an error is returned.
#include <chrono>
#include <string>
#include <vector>

#include "agent/process_launcher.h"
#include "common/status.h"

namespace ring {

struct CommandResult {
  ExitStatus exit;
  std::string out;  // stdout, lines joined with '\n' (at most kMaxOutput bytes kept)
  std::string err;  // stderr, likewise
  bool ok() const { return exit.exit_code && *exit.exit_code == 0; }
  // The last line of stderr, for a message.
  std::string LastError() const;
};

inline constexpr size_t kMaxCommandOutput = 4u << 20;

Result<CommandResult> RunCommand(ProcessLauncher& launcher, std::vector<std::string> argv,
                                 std::vector<std::string> env, std::chrono::milliseconds timeout);

}  // namespace ring
