#include "tests/support/ring_in_a_terminal.h"

#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <regex>
#include <thread>

namespace ring::testing {

using namespace std::chrono_literals;

RingInATerminal::RingInATerminal(const std::vector<std::string>& args,
                                 const std::map<std::string, std::string>& env) {
  winsize ws{};
  ws.ws_row = 24;
  ws.ws_col = 80;
  int slave = -1;
  EXPECT_EQ(::openpty(&master_, &slave, nullptr, nullptr, &ws), 0);
  pid_ = ::fork();
  if (pid_ == 0) {
    ::setsid();
    ::ioctl(slave, TIOCSCTTY, 0);
    ::dup2(slave, 0);
    ::dup2(slave, 1);
    ::dup2(slave, 2);
    for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(slave);
}

RingInATerminal::~RingInATerminal() {
  if (pid_ > 0 && !exited_) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  ::close(master_);
}

bool RingInATerminal::WaitFor(const std::string& pattern, std::chrono::milliseconds timeout) {
  const std::regex re(pattern);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    std::smatch m;
    const std::string rest = screen_.substr(seen_);
    if (std::regex_search(rest, m, re)) {
      seen_ += m.position(0) + m.length(0);
      return true;
    }
    pollfd p{master_, POLLIN, 0};
    if (::poll(&p, 1, 100) > 0) {
      char buf[4096];
      const ssize_t n = ::read(master_, buf, sizeof buf);
      if (n > 0) screen_.append(buf, static_cast<size_t>(n));
      if (n <= 0) std::this_thread::sleep_for(50ms);
    }
  }
  return false;
}

void RingInATerminal::Type(const std::string& keys) {
  ASSERT_EQ(::write(master_, keys.data(), keys.size()), (ssize_t)keys.size());
}

void RingInATerminal::Resize(int rows, int cols) {
  winsize ws{};
  ws.ws_row = static_cast<unsigned short>(rows);
  ws.ws_col = static_cast<unsigned short>(cols);
  ::ioctl(master_, TIOCSWINSZ, &ws);
}

int RingInATerminal::Wait(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    WaitFor("$^", 50ms);  // keeps draining the terminal
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      exited_ = true;
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
  }
  return -1;
}

}  // namespace ring::testing
