// PosixProcessLauncher against real /bin/sh processes.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>

#include "agent/posix_process_launcher.h"

namespace ring {
namespace {

using namespace std::chrono_literals;

// Collects one process's callbacks (they run on the launcher's watcher thread).
class Recorder {
 public:
  ProcessCallbacks Callbacks() {
    return {[this](OutputStream s, std::string line) {
              std::lock_guard lock(mutex_);
              (s == OutputStream::kStdout ? out_ : err_).push_back(std::move(line));
              if (exit_) line_after_exit_ = true;
              cv_.notify_all();
            },
            [this](ExitStatus status) {
              std::lock_guard lock(mutex_);
              ++exits_;
              exit_ = status;
              cv_.notify_all();
            }};
  }
  std::optional<ExitStatus> WaitExit(std::chrono::milliseconds timeout = 10s) {
    std::unique_lock lock(mutex_);
    cv_.wait_for(lock, timeout, [&] { return exit_.has_value(); });
    return exit_;
  }
  bool WaitStdoutLines(size_t n, std::chrono::milliseconds timeout = 10s) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, timeout, [&] { return out_.size() >= n; });
  }
  std::vector<std::string> out() {
    std::lock_guard lock(mutex_);
    return out_;
  }
  std::vector<std::string> err() {
    std::lock_guard lock(mutex_);
    return err_;
  }
  int exits() {
    std::lock_guard lock(mutex_);
    return exits_;
  }
  bool line_after_exit() {
    std::lock_guard lock(mutex_);
    return line_after_exit_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<std::string> out_, err_;
  std::optional<ExitStatus> exit_;
  int exits_ = 0;
  bool line_after_exit_ = false;
};

ProcessSpec Shell(const std::string& command) {
  return ProcessSpec{ShellCommand(command), "", {"PATH=/usr/bin:/bin"}};
}

// True when `pid` is gone or a zombie waiting for its new parent to reap it.
bool IsDead(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return true;
  std::string content((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  auto paren = content.rfind(')');
  return paren != std::string::npos && paren + 2 < content.size() && content[paren + 2] == 'Z';
}

bool WaitDead(pid_t pid, std::chrono::milliseconds timeout = 5s) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (IsDead(pid)) return true;
    std::this_thread::sleep_for(10ms);
  }
  return IsDead(pid);
}

TEST(AgentPosixLauncher, CapturesStdoutAndStderrLinesInOrder) {
  PosixProcessLauncher launcher;
  Recorder rec;
  auto h =
      launcher.Launch(Shell("printf 'a\\nb\\n'; printf 'e1\\n' >&2; echo c; printf 'e2' >&2; printf 'tail'"),
                      rec.Callbacks());
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_GT(h->pid, 0);
  auto exit = rec.WaitExit();
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->exit_code, 0);
  EXPECT_FALSE(exit->signal.has_value());
  EXPECT_EQ(rec.out(), (std::vector<std::string>{"a", "b", "c", "tail"}));
  EXPECT_EQ(rec.err(), (std::vector<std::string>{"e1", "e2"}));
  EXPECT_FALSE(rec.line_after_exit());
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(rec.exits(), 1);
}

TEST(AgentPosixLauncher, ReportsExitCode) {
  PosixProcessLauncher launcher;
  Recorder rec;
  ASSERT_TRUE(launcher.Launch(Shell("exit 3"), rec.Callbacks()).ok());
  auto exit = rec.WaitExit();
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->exit_code, 3);
}

TEST(AgentPosixLauncher, ReportsDeathBySignal) {
  PosixProcessLauncher launcher;
  Recorder rec;
  ASSERT_TRUE(launcher.Launch(Shell("kill -USR1 $$; sleep 5"), rec.Callbacks()).ok());
  auto exit = rec.WaitExit();
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->signal, SIGUSR1);
  EXPECT_FALSE(exit->exit_code.has_value());
}

TEST(AgentPosixLauncher, UsesWorkingDirectoryAndEnvironmentExactly) {
  auto dir = std::filesystem::temp_directory_path() / ("ring-agent-launch-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  PosixProcessLauncher launcher;
  Recorder rec;
  ProcessSpec spec{
      ShellCommand("pwd; echo \"$FOO\"; echo \"${HOME:-unset}\""), dir.string(), {"FOO=bar baz"}};
  ASSERT_TRUE(launcher.Launch(spec, rec.Callbacks()).ok());
  ASSERT_TRUE(rec.WaitExit().has_value());
  EXPECT_EQ(rec.out(), (std::vector<std::string>{dir.string(), "bar baz", "unset"}));
  std::filesystem::remove_all(dir);
}

TEST(AgentPosixLauncher, FailsToLaunchWithAMissingDirectoryOrProgram) {
  PosixProcessLauncher launcher;
  Recorder rec;
  ProcessSpec spec{ShellCommand("true"), "/nonexistent/ring-dir", {}};
  auto h = launcher.Launch(spec, rec.Callbacks());
  ASSERT_FALSE(h.ok());
  EXPECT_NE(h.status().message().find("No such file"), std::string::npos) << h.status().message();
  auto missing = launcher.Launch(ProcessSpec{{"/nonexistent/program"}, "", {}}, rec.Callbacks());
  EXPECT_FALSE(missing.ok());
  EXPECT_FALSE(launcher.Launch(ProcessSpec{{"relative"}, "", {}}, rec.Callbacks()).ok());
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(rec.exits(), 0);  // no callback for a process that never started
}

TEST(AgentPosixLauncher, TerminateEndsAProcessThatHonoursSigterm) {
  PosixProcessLauncher launcher;
  Recorder rec;
  auto h = launcher.Launch(Shell("echo ready; sleep 30"), rec.Callbacks());
  ASSERT_TRUE(h.ok());
  ASSERT_TRUE(rec.WaitStdoutLines(1));
  auto t0 = std::chrono::steady_clock::now();
  launcher.Terminate(h->pid, 5s);
  auto exit = rec.WaitExit();
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->signal, SIGTERM);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 3s);
}

TEST(AgentPosixLauncher, SigkillAfterGraceWhenSigtermIsTrapped) {
  PosixProcessLauncher launcher;
  Recorder rec;
  auto h = launcher.Launch(Shell("trap 'echo got-term' TERM; echo ready; while true; do sleep 0.05; done"),
                           rec.Callbacks());
  ASSERT_TRUE(h.ok());
  ASSERT_TRUE(rec.WaitStdoutLines(1));
  auto t0 = std::chrono::steady_clock::now();
  launcher.Terminate(h->pid, 400ms);
  auto exit = rec.WaitExit();
  auto elapsed = std::chrono::steady_clock::now() - t0;
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->signal, SIGKILL);
  EXPECT_GE(elapsed, 350ms);
  EXPECT_LT(elapsed, 5s);
  auto out = rec.out();
  EXPECT_NE(std::find(out.begin(), out.end(), "got-term"), out.end());  // SIGTERM was delivered first
}

TEST(AgentPosixLauncher, TerminateKillsTheWholeProcessGroup) {
  PosixProcessLauncher launcher;
  Recorder rec;
  auto h = launcher.Launch(Shell("sleep 30 & echo $!; wait"), rec.Callbacks());
  ASSERT_TRUE(h.ok());
  ASSERT_TRUE(rec.WaitStdoutLines(1));
  pid_t child = static_cast<pid_t>(std::stol(rec.out()[0]));
  ASSERT_FALSE(IsDead(child));
  launcher.Terminate(h->pid, 5s);
  auto exit = rec.WaitExit();
  ASSERT_TRUE(exit.has_value());
  EXPECT_TRUE(WaitDead(child)) << "background child " << child << " survived";
}

TEST(AgentPosixLauncher, LeftoverProcessesOfTheGroupDieWithTheLeader) {
  PosixProcessLauncher launcher;
  Recorder rec;
  auto h = launcher.Launch(Shell("sleep 30 & echo $!; exit 0"), rec.Callbacks());
  ASSERT_TRUE(h.ok());
  auto exit = rec.WaitExit();
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->exit_code, 0);
  ASSERT_EQ(rec.out().size(), 1u);
  EXPECT_TRUE(WaitDead(static_cast<pid_t>(std::stol(rec.out()[0]))));
}

TEST(AgentPosixLauncher, SignalReachesTheGroupAndFailsAfterExit) {
  PosixProcessLauncher launcher;
  Recorder rec;
  auto h = launcher.Launch(
      Shell("trap 'echo usr1; exit 7' USR1; echo ready; while true; do sleep 0.05; done"), rec.Callbacks());
  ASSERT_TRUE(h.ok());
  ASSERT_TRUE(rec.WaitStdoutLines(1));
  EXPECT_TRUE(launcher.Signal(h->pid, SIGUSR1).ok());
  auto exit = rec.WaitExit();
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->exit_code, 7);
  EXPECT_EQ(launcher.Signal(h->pid, SIGTERM).code(), ErrorCode::kNotFound);
  launcher.Terminate(h->pid, 0ms);  // harmless after the end
}

TEST(AgentPosixLauncher, SplitsLinesLongerThan64KiB) {
  PosixProcessLauncher launcher;
  Recorder rec;
  ASSERT_TRUE(
      launcher.Launch(Shell("head -c 70000 /dev/zero | tr '\\0' x; echo; echo short"), rec.Callbacks()).ok());
  ASSERT_TRUE(rec.WaitExit().has_value());
  auto out = rec.out();
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].size(), 65536u);
  EXPECT_EQ(out[1].size(), 70000u - 65536u);
  EXPECT_EQ(out[2], "short");
}

TEST(AgentPosixLauncher, AgentFileDescriptorsDoNotLeakIntoTrials) {
  int low = ::open("/dev/null", O_RDONLY);
  ASSERT_GE(low, 0);
  int fd = ::fcntl(low, F_DUPFD, 50);  // deliberately without close-on-exec, above the fds the child reuses
  ::close(low);
  ASSERT_GE(fd, 50);
  PosixProcessLauncher launcher;
  Recorder rec;
  std::string check =
      "if [ -e /proc/$$/fd/" + std::to_string(fd) + " ]; then echo leaked; else echo closed; fi";
  ASSERT_TRUE(launcher.Launch(Shell(check), rec.Callbacks()).ok());
  ASSERT_TRUE(rec.WaitExit().has_value());
  ::close(fd);
  EXPECT_EQ(rec.out(), std::vector<std::string>{"closed"});
}

TEST(AgentPosixLauncher, DestructorKillsWhatIsStillRunning) {
  Recorder rec;
  pid_t pid = 0;
  {
    PosixProcessLauncher launcher;
    auto h = launcher.Launch(Shell("echo ready; sleep 30"), rec.Callbacks());
    ASSERT_TRUE(h.ok());
    pid = static_cast<pid_t>(h->pid);
    ASSERT_TRUE(rec.WaitStdoutLines(1));
  }
  auto exit = rec.WaitExit(1s);
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->signal, SIGKILL);
  EXPECT_TRUE(IsDead(pid));
}

}  // namespace
}  // namespace ring
