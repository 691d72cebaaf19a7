#pragma once
// Runs processes with fork + execve. Each child leads its own process group
// (so signals reach everything it starts) and gets /dev/null as stdin and
// pipes as stdout/stderr. One watcher thread per process reads the pipes line
// by line, enforces the SIGKILL deadline of Terminate, and reaps it; the
// callbacks run on that watcher thread. When the leader exits, whatever it
// left running in its group is killed (it would hold the slots otherwise),
// and so is everything in its containment group (a cgroup, see
// process_containment.h), which also holds the processes that left the
// process group. A spec with a terminal gets a new pseudo-terminal instead
// of /dev/null and pipes, and leads a session of its own. A spec with run_as is switched to those ids in the
// child, between fork and exec, with every capability dropped.
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "agent/process_containment.h"
#include "agent/process_launcher.h"

namespace ring {

class PosixProcessLauncher : public ProcessLauncher {
 public:
  explicit PosixProcessLauncher(ProcessContainment containment = {}) : containment_(std::move(containment)) {}
  // SIGKILLs every process group still running and joins the watchers.
  ~PosixProcessLauncher() override;
  PosixProcessLauncher(const PosixProcessLauncher&) = delete;
  PosixProcessLauncher& operator=(const PosixProcessLauncher&) = delete;

  Result<ProcessHandle> Launch(const ProcessSpec& spec, ProcessCallbacks callbacks) override;
  Status Signal(int64_t pid, int signal) override;
  void Terminate(int64_t pid, std::chrono::milliseconds grace) override;
  Status WriteTerminal(int64_t pid, std::string_view bytes) override;
  Status ResizeTerminal(int64_t pid, TerminalSize size) override;

 private:
  struct Process;
  void Watch(const std::shared_ptr<Process>& process);
  void JoinFinishedLocked();

  const ProcessContainment containment_;
  std::mutex mutex_;  // guards processes_ and each Process's kill fields
  std::unordered_map<int64_t, std::shared_ptr<Process>> processes_;
};

}  // namespace ring
