#pragma once
// A ProcessLauncher for unit tests: nothing is started. Tests read what was
// launched and signalled, and drive output and exits by hand; callbacks run
// on the thread that calls EmitLine / Exit (or Terminate, when
// exit_on_terminate is set). Thread-safe.
#include <map>
#include <mutex>
#include <thread>

#include "agent/process_launcher.h"

namespace ring {

class FakeProcessLauncher : public ProcessLauncher {
 public:
  struct Launched {
    int64_t pid = 0;
    ProcessSpec spec;
    bool exited = false;
  };
  struct SignalSent {
    int64_t pid = 0;
    int signal = 0;
  };

  ~FakeProcessLauncher() override;

  // What a short command prints and how it ends, for set_auto_exit.
  struct AutoExit {
    std::vector<std::string> out;  // stdout lines
    ExitStatus status;
  };
  using AutoExitRule = std::function<std::optional<AutoExit>(const ProcessSpec&)>;

  Result<ProcessHandle> Launch(const ProcessSpec& spec, ProcessCallbacks callbacks) override;
  Status Signal(int64_t pid, int signal) override;
  void Terminate(int64_t pid, std::chrono::milliseconds grace) override;
  Status WriteTerminal(int64_t pid, std::string_view bytes) override;
  Status ResizeTerminal(int64_t pid, TerminalSize size) override;

  // The next Launch fails with this status (once).
  void FailNextLaunch(Status status);
  // When true, Terminate ends the process at once with SIGTERM (a process that
  // honours SIGTERM); otherwise it only records the request.
  void set_exit_on_terminate(bool value);
  // A launched process for which `rule` answers prints its lines and ends at
  // once, on a thread of the launcher's own (commands run to their end).
  void set_auto_exit(AutoExitRule rule);

  void EmitLine(int64_t pid, OutputStream stream, const std::string& line);
  // Output of a process with a terminal.
  void EmitTerminalOutput(int64_t pid, const std::string& bytes);
  // What was typed into each process's terminal, and its sizes, in order.
  std::string typed(int64_t pid) const;
  std::vector<TerminalSize> sizes(int64_t pid) const;
  void Exit(int64_t pid, ExitStatus status);

  std::vector<Launched> launched() const;
  std::vector<SignalSent> signals() const;
  // (pid, grace) of every Terminate call.
  std::vector<std::pair<int64_t, std::chrono::milliseconds>> terminations() const;

 private:
  struct Entry {
    Launched info;
    ProcessCallbacks callbacks;
    std::string typed;
    std::vector<TerminalSize> sizes;
  };
  mutable std::mutex mutex_;
  int64_t next_pid_ = 1000;
  std::map<int64_t, Entry> processes_;
  std::vector<SignalSent> signals_;
  std::vector<std::pair<int64_t, std::chrono::milliseconds>> terminations_;
  std::optional<Status> next_launch_error_;
  bool exit_on_terminate_ = false;
  AutoExitRule auto_exit_;
  std::vector<std::thread> auto_exits_;  // joined by the destructor
};

}  // namespace ring
