// Processes in a pseudo-terminal (ProcessSpec::terminal): a real /bin/sh
// that is interactive because its stdin is a terminal. What is typed
// reaches it, its size and resizes reach `stty`, Ctrl-C interrupts its
// foreground job and not the shell, and its exit is reported.
#include <signal.h>

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>

#include "agent/posix_process_launcher.h"

namespace ring {
namespace {

using namespace std::chrono_literals;

// Everything the terminal showed, and the exit.
class Screen {
 public:
  ProcessCallbacks Callbacks() {
    ProcessCallbacks c;
    c.on_exit = [this](ExitStatus status) {
      std::lock_guard lock(mutex_);
      exit_ = status;
      cv_.notify_all();
    };
    c.on_terminal_output = [this](std::string bytes) {
      std::lock_guard lock(mutex_);
      text_ += bytes;
      cv_.notify_all();
    };
    return c;
  }
  // Waits until `needle` shows after what was seen before (then looks on from there).
  bool WaitFor(const std::string& needle, std::chrono::milliseconds timeout = 10s) {
    std::unique_lock lock(mutex_);
    const bool found =
        cv_.wait_for(lock, timeout, [&] { return text_.find(needle, seen_) != std::string::npos; });
    if (found) seen_ = text_.find(needle, seen_) + needle.size();
    return found;
  }
  std::optional<ExitStatus> WaitExit(std::chrono::milliseconds timeout = 10s) {
    std::unique_lock lock(mutex_);
    cv_.wait_for(lock, timeout, [&] { return exit_.has_value(); });
    return exit_;
  }
  std::string text() {
    std::lock_guard lock(mutex_);
    return text_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::string text_;
  size_t seen_ = 0;
  std::optional<ExitStatus> exit_;
};

ProcessSpec ShellInATerminal() {
  ProcessSpec spec;
  spec.argv = {"/bin/sh"};
  spec.env = {"PATH=/usr/bin:/bin", "PS1=ring$ ", "TERM=xterm"};
  spec.terminal = TerminalSize{24, 80};
  return spec;
}

TEST(AgentTerminal, AShellTypesReadsResizesAndInterrupts) {
  PosixProcessLauncher launcher;
  Screen screen;
  auto h = launcher.Launch(ShellInATerminal(), screen.Callbacks());
  ASSERT_TRUE(h.ok()) << h.status().message();
  ASSERT_TRUE(screen.WaitFor("ring$ ")) << screen.text();

  ASSERT_TRUE(launcher.WriteTerminal(h->pid, "stty size; tty\n").ok());
  ASSERT_TRUE(screen.WaitFor("24 80")) << screen.text();
  ASSERT_TRUE(screen.WaitFor("/dev/pts/")) << screen.text();

  ASSERT_TRUE(launcher.ResizeTerminal(h->pid, TerminalSize{40, 100}).ok());
  ASSERT_TRUE(launcher.WriteTerminal(h->pid, "stty size\n").ok());
  ASSERT_TRUE(screen.WaitFor("40 100")) << screen.text();
  ASSERT_TRUE(screen.WaitFor("ring$ ")) << screen.text();

  // Ctrl-C ends the foreground job; the shell lives on.
  ASSERT_TRUE(launcher.WriteTerminal(h->pid, "sleep 30; echo slept\n").ok());
  ASSERT_TRUE(screen.WaitFor("ring$ ", 1s) == false);  // sleeping: no prompt yet
  ASSERT_TRUE(launcher.WriteTerminal(h->pid, "\x03").ok());
  ASSERT_TRUE(launcher.WriteTerminal(h->pid, "echo after-$((6*7))\n").ok());
  ASSERT_TRUE(screen.WaitFor("after-42", 5s)) << screen.text();
  EXPECT_EQ(screen.text().find("\nslept\r\n"), std::string::npos)
      << screen.text();  // the echo is "...; echo slept"

  ASSERT_TRUE(launcher.WriteTerminal(h->pid, "exit 7\n").ok());
  auto exit = screen.WaitExit();
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->exit_code, 7);
  EXPECT_EQ(launcher.WriteTerminal(h->pid, "late\n").code(), ErrorCode::kNotFound);
}

TEST(AgentTerminal, TerminateEndsTheShellsSession) {
  PosixProcessLauncher launcher;
  Screen screen;
  auto h = launcher.Launch(ShellInATerminal(), screen.Callbacks());
  ASSERT_TRUE(h.ok()) << h.status().message();
  ASSERT_TRUE(screen.WaitFor("ring$ "));
  launcher.Terminate(h->pid, 500ms);  // an interactive shell ignores SIGTERM: SIGKILL after the grace
  auto exit = screen.WaitExit(5s);
  ASSERT_TRUE(exit.has_value());
  EXPECT_TRUE(exit->signal.has_value());
}

TEST(AgentTerminal, AProcessWithoutATerminalTakesNoTyping) {
  PosixProcessLauncher launcher;
  Screen screen;
  ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", "sleep 5"};
  auto h = launcher.Launch(spec, screen.Callbacks());
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(launcher.WriteTerminal(h->pid, "x").code(), ErrorCode::kConflict);
  EXPECT_EQ(launcher.ResizeTerminal(h->pid, {}).code(), ErrorCode::kConflict);
  launcher.Terminate(h->pid, 0ms);
}

}  // namespace
}  // namespace ring
