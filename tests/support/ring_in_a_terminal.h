#pragma once
// `ring ARGS...` in a real pseudo-terminal, for end-to-end tests of shells:
// the test holds the terminal's master side, as a terminal emulator would,
// types into it, resizes it and reads what `ring` shows.
#include <sys/types.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace ring::testing {

class RingInATerminal {
 public:
  // Starts `args` (argv[0] a path) with a new 24x80 pseudo-terminal as its
  // controlling terminal, stdin, stdout and stderr, `env` added.
  RingInATerminal(const std::vector<std::string>& args, const std::map<std::string, std::string>& env);
  ~RingInATerminal();
  RingInATerminal(const RingInATerminal&) = delete;
  RingInATerminal& operator=(const RingInATerminal&) = delete;

  // Reads until `pattern` (a std::regex) matches what came after the last
  // match; false when it did not within `timeout`.
  bool WaitFor(const std::string& pattern, std::chrono::milliseconds timeout = std::chrono::seconds(20));
  // Writes keys to the terminal (a test failure when they cannot all be written).
  void Type(const std::string& keys);
  // Changes the window size: the kernel sends `ring` SIGWINCH.
  void Resize(int rows, int cols);
  // Its exit code, reading the terminal meanwhile (-1: still running after
  // `timeout`).
  int Wait(std::chrono::milliseconds timeout = std::chrono::seconds(20));
  // Everything the terminal showed so far.
  const std::string& screen() const { return screen_; }

 private:
  int master_ = -1;
  pid_t pid_ = -1;
  bool exited_ = false;
  std::string screen_;
  size_t seen_ = 0;
};

}  // namespace ring::testing
