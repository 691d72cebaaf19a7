#pragma once
// Starting and stopping trial processes: the boundary between the agent's
// logic and the operating system. PosixProcessLauncher is the real one,
// FakeProcessLauncher (fake_process_launcher.h) the one unit tests drive.
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace ring {

struct ProcessSpec {
  std::vector<std::string> argv;  // argv[0] is the program's absolute path
  std::string cwd;                // working directory ("" = the agent's)
  std::vector<std::string> env;   // the complete environment, "NAME=value"
};

// `/bin/sh -c <command>`.
inline std::vector<std::string> ShellCommand(const std::string& command) {
  return {"/bin/sh", "-c", command};
}

enum class OutputStream { kStdout, kStderr };
inline const char* ToString(OutputStream s) {
  return s == OutputStream::kStdout ? "stdout" : "stderr";
}

// How a process ended: exactly one of the two is set.
struct ExitStatus {
  std::optional<int> exit_code;
  std::optional<int> signal;
};

struct ProcessCallbacks {
  // One line of output, without its newline (lines over 64 KiB arrive split).
  std::function<void(OutputStream, std::string)> on_line;
  // Called once, after the last on_line of this process.
  std::function<void(ExitStatus)> on_exit;
};

struct ProcessHandle {
  int64_t pid = 0;  // also the id of the process group it leads
};

// Implementations say on which thread the callbacks run; they never run
// while Launch holds the caller. All methods are thread-safe.
class ProcessLauncher {
 public:
  virtual ~ProcessLauncher() = default;
  // Starts the process in its own process group. A failure to start (missing
  // program, bad cwd) is an error and no callback is ever called.
  virtual Result<ProcessHandle> Launch(const ProcessSpec& spec, ProcessCallbacks callbacks) = 0;
  // Sends `signal` to the whole process group. NotFound once it was reaped.
  virtual Status Signal(int64_t pid, int signal) = 0;
  // SIGTERM to the group now, SIGKILL to the group if the process is still
  // alive after `grace` (grace 0 = SIGKILL at once).
  virtual void Terminate(int64_t pid, std::chrono::milliseconds grace) = 0;
};

}  // namespace ring
