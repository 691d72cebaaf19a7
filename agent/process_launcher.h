#pragma once
// Starting and stopping trial processes: the boundary between the agent's
// logic and the operating system. PosixProcessLauncher is the real one,
// FakeProcessLauncher (fake_process_launcher.h) the one unit tests drive.
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace ring {

// The Unix identity a process is switched to before exec.
struct SwitchIds {
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::vector<uint32_t> groups;  // supplementary groups (the complete list)
};

// The size of a pseudo-terminal, in characters.
struct TerminalSize {
  uint16_t rows = 24;
  uint16_t cols = 80;
};

struct ProcessSpec {
  std::vector<std::string> argv;  // argv[0] is the program's absolute path
  std::string cwd;                // working directory ("" = the agent's), entered as `run_as`
  std::vector<std::string> env;   // the complete environment, "NAME=value"
  // Absent: the process runs as the agent (single-user mode). Present: it
  // runs as these ids with no way back to the agent's (or root's) rights.
  std::optional<SwitchIds> run_as;
  // Name of the process's own containment group (a cgroup where the host has
  // one), e.g. "<allocation>.r<rank>"; empty = its process group only.
  std::string group;
  // The process (and what it execs) ignores SIGTERM: in a Slurm job, where
  // Slurm's SIGTERM reaches every process of the job, a wrapper shell would
  // otherwise die of it before the trial checkpointed (the trial hears of
  // the stop from the master instead).
  bool ignore_sigterm = false;
  // Present: the process leads a new session whose controlling terminal is
  // a new pseudo-terminal of this size, its stdin, stdout and stderr (an
  // interactive shell); its output arrives raw through on_terminal_output
  // and WriteTerminal types into it. Absent: /dev/null and pipes.
  std::optional<TerminalSize> terminal;
};

// `/bin/sh -c <command>`.
inline std::vector<std::string> ShellCommand(const std::string& command) {
  return {"/bin/sh", "-c", command};
}

// `argv` run without a shell: /usr/bin/env finds argv[0] on the process's
// own PATH, as the shell would, and execs it with the arguments as given.
inline std::vector<std::string> ExecCommand(const std::vector<std::string>& argv) {
  std::vector<std::string> out{"/usr/bin/env", "--"};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
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
  // Called once, after the last on_line (or on_terminal_output) of this process.
  std::function<void(ExitStatus)> on_exit;
  // What a process with a terminal wrote to it, as it came (any bytes).
  std::function<void(std::string)> on_terminal_output;
};

struct ProcessHandle {
  int64_t pid = 0;  // also the id of the process group it leads
};

// Implementations say on which thread the callbacks run; they never run
// while Launch holds the caller. All methods are thread-safe.
class ProcessLauncher {
 public:
  virtual ~ProcessLauncher() = default;
  // Starts the process in its own process group (and containment group). A
  // failure to start (missing program, bad cwd, refused switch of user) is
  // an error and no callback is ever called.
  virtual Result<ProcessHandle> Launch(const ProcessSpec& spec, ProcessCallbacks callbacks) = 0;
  // Sends `signal` to the whole process group. NotFound once it was reaped.
  virtual Status Signal(int64_t pid, int signal) = 0;
  // SIGTERM to the group now, SIGKILL to the group if the process is still
  // alive after `grace` (grace 0 = SIGKILL at once). Once the process has
  // ended, everything left in its containment group is killed too, including
  // processes that left its process group.
  virtual void Terminate(int64_t pid, std::chrono::milliseconds grace) = 0;
  // For a process launched with a terminal: types `bytes` into it (Ctrl-C
  // is "\x03", which the terminal turns into SIGINT for its foreground
  // job), and gives it a new size (SIGWINCH). NotFound once it was reaped,
  // Conflict for a process without a terminal.
  virtual Status WriteTerminal(int64_t pid, std::string_view bytes) = 0;
  virtual Status ResizeTerminal(int64_t pid, TerminalSize size) = 0;
};

}  // namespace ring
