#pragma once
// Child processes for integration and end-to-end tests: started with an
// argument vector and extra environment, output to a log file, and always
// stopped (SIGTERM, then SIGKILL) when the handle goes away.
#include <sys/types.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace ring::testing {

class ChildProcess {
 public:
  ChildProcess() = default;
  ChildProcess(std::vector<std::string> argv, std::map<std::string, std::string> env, std::string log_path);
  ~ChildProcess();
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;

  pid_t pid() const { return pid_; }
  bool running();
  void Signal(int sig);
  // SIGTERM, wait up to `grace`, then SIGKILL. Returns the wait status.
  int Stop(std::chrono::milliseconds grace = std::chrono::seconds(5));
  // Waits for exit up to `timeout`; returns the exit code, or -1 on timeout / signal.
  int Wait(std::chrono::milliseconds timeout);
  const std::string& log_path() const { return log_path_; }

 private:
  pid_t pid_ = -1;
  int status_ = 0;
  bool reaped_ = false;
  std::string log_path_;
};

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs a command to completion (bounded by `timeout`), capturing both streams.
CommandResult RunCommand(const std::vector<std::string>& argv,
                         const std::map<std::string, std::string>& env = {},
                         std::chrono::milliseconds timeout = std::chrono::seconds(120));

std::string ReadFileText(const std::string& path);

}  // namespace ring::testing
