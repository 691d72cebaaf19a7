#include "tests/support/process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>
#include <utility>

namespace ring::testing {
namespace {

[[noreturn]] void ExecChild(const std::vector<std::string>& argv,
                            const std::map<std::string, std::string>& env) {
  for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  execvp(args[0], args.data());
  fprintf(stderr, "exec %s failed: %s\n", args[0], strerror(errno));
  _exit(127);
}

}  // namespace

ChildProcess::ChildProcess(std::vector<std::string> argv, std::map<std::string, std::string> env,
                           std::string log_path)
    : log_path_(std::move(log_path)) {
  pid_ = fork();
  if (pid_ == 0) {
    int fd = open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      close(fd);
    }
    setpgid(0, 0);
    ExecChild(argv, env);
  }
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !reaped_) Stop();
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept {
  *this = std::move(other);
}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    if (pid_ > 0 && !reaped_) Stop();
    pid_ = std::exchange(other.pid_, -1);
    status_ = other.status_;
    reaped_ = std::exchange(other.reaped_, true);
    log_path_ = std::move(other.log_path_);
  }
  return *this;
}

bool ChildProcess::running() {
  if (pid_ <= 0 || reaped_) return false;
  int status = 0;
  pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    reaped_ = true;
    status_ = status;
    return false;
  }
  return true;
}

void ChildProcess::Signal(int sig) {
  if (running()) kill(pid_, sig);
}

int ChildProcess::Wait(std::chrono::milliseconds timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (running()) {
    if (std::chrono::steady_clock::now() >= until) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return WIFEXITED(status_) ? WEXITSTATUS(status_) : -1;
}

int ChildProcess::Stop(std::chrono::milliseconds grace) {
  if (!running()) return status_;
  kill(pid_, SIGTERM);
  if (Wait(grace) == -1 && running()) {
    kill(-pid_, SIGKILL);  // the child leads its own group
    kill(pid_, SIGKILL);
    waitpid(pid_, &status_, 0);
    reaped_ = true;
  }
  return status_;
}

CommandResult RunCommand(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
                         std::chrono::milliseconds timeout) {
  char out_path[] = "/tmp/ring-cmd-out-XXXXXX";
  char err_path[] = "/tmp/ring-cmd-err-XXXXXX";
  int out_fd = mkstemp(out_path);
  int err_fd = mkstemp(err_path);
  CommandResult result;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out_fd, 1);
    dup2(err_fd, 2);
    int devnull = open("/dev/null", O_RDONLY);
    dup2(devnull, 0);
    ExecChild(argv, env);
  }
  close(out_fd);
  close(err_fd);
  const auto until = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  for (;;) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (std::chrono::steady_clock::now() >= until) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      result.err = "timed out\n";
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  result.out = ReadFileText(out_path);
  result.err += ReadFileText(err_path);
  unlink(out_path);
  unlink(err_path);
  return result;
}

std::string ReadFileText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace ring::testing
