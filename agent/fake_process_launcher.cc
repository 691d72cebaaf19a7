#include "agent/fake_process_launcher.h"

#include <signal.h>

namespace ring {

FakeProcessLauncher::~FakeProcessLauncher() {
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mutex_);
    threads.swap(auto_exits_);
  }
  for (auto& t : threads) t.join();
}

Result<ProcessHandle> FakeProcessLauncher::Launch(const ProcessSpec& spec, ProcessCallbacks callbacks) {
  std::lock_guard lock(mutex_);
  if (next_launch_error_) {
    Status error = std::move(*next_launch_error_);
    next_launch_error_.reset();
    return error;
  }
  int64_t pid = next_pid_++;
  processes_[pid] = Entry{Launched{pid, spec, false}, std::move(callbacks)};
  if (auto_exit_)
    if (auto answer = auto_exit_(spec))
      auto_exits_.emplace_back([this, pid, answer = *answer] {
        for (const auto& line : answer.out) EmitLine(pid, OutputStream::kStdout, line);
        Exit(pid, answer.status);
      });
  return ProcessHandle{pid};
}

void FakeProcessLauncher::set_auto_exit(AutoExitRule rule) {
  std::lock_guard lock(mutex_);
  auto_exit_ = std::move(rule);
}

Status FakeProcessLauncher::Signal(int64_t pid, int signal) {
  std::lock_guard lock(mutex_);
  auto it = processes_.find(pid);
  if (it == processes_.end() || it->second.info.exited) return NotFound("process has ended");
  signals_.push_back({pid, signal});
  return Status::Ok();
}

void FakeProcessLauncher::Terminate(int64_t pid, std::chrono::milliseconds grace) {
  bool exit_now = false;
  {
    std::lock_guard lock(mutex_);
    auto it = processes_.find(pid);
    if (it == processes_.end() || it->second.info.exited) return;
    terminations_.emplace_back(pid, grace);
    signals_.push_back({pid, grace.count() <= 0 ? SIGKILL : SIGTERM});
    exit_now = exit_on_terminate_;
  }
  if (exit_now) Exit(pid, ExitStatus{std::nullopt, grace.count() <= 0 ? SIGKILL : SIGTERM});
}

void FakeProcessLauncher::FailNextLaunch(Status status) {
  std::lock_guard lock(mutex_);
  next_launch_error_ = std::move(status);
}

void FakeProcessLauncher::set_exit_on_terminate(bool value) {
  std::lock_guard lock(mutex_);
  exit_on_terminate_ = value;
}

void FakeProcessLauncher::EmitLine(int64_t pid, OutputStream stream, const std::string& line) {
  std::function<void(OutputStream, std::string)> on_line;
  {
    std::lock_guard lock(mutex_);
    auto it = processes_.find(pid);
    if (it == processes_.end() || it->second.info.exited) return;
    on_line = it->second.callbacks.on_line;
  }
  if (on_line) on_line(stream, line);
}

Status FakeProcessLauncher::WriteTerminal(int64_t pid, std::string_view bytes) {
  std::lock_guard lock(mutex_);
  auto it = processes_.find(pid);
  if (it == processes_.end() || it->second.info.exited) return NotFound("process has ended");
  if (!it->second.info.spec.terminal) return Conflict("the process has no terminal");
  it->second.typed.append(bytes);
  return Status::Ok();
}

Status FakeProcessLauncher::ResizeTerminal(int64_t pid, TerminalSize size) {
  std::lock_guard lock(mutex_);
  auto it = processes_.find(pid);
  if (it == processes_.end() || it->second.info.exited) return NotFound("process has ended");
  if (!it->second.info.spec.terminal) return Conflict("the process has no terminal");
  it->second.sizes.push_back(size);
  return Status::Ok();
}

void FakeProcessLauncher::EmitTerminalOutput(int64_t pid, const std::string& bytes) {
  std::function<void(std::string)> on_output;
  {
    std::lock_guard lock(mutex_);
    auto it = processes_.find(pid);
    if (it == processes_.end() || it->second.info.exited) return;
    on_output = it->second.callbacks.on_terminal_output;
  }
  if (on_output) on_output(bytes);
}

std::string FakeProcessLauncher::typed(int64_t pid) const {
  std::lock_guard lock(mutex_);
  auto it = processes_.find(pid);
  return it == processes_.end() ? "" : it->second.typed;
}

std::vector<TerminalSize> FakeProcessLauncher::sizes(int64_t pid) const {
  std::lock_guard lock(mutex_);
  auto it = processes_.find(pid);
  return it == processes_.end() ? std::vector<TerminalSize>{} : it->second.sizes;
}

void FakeProcessLauncher::Exit(int64_t pid, ExitStatus status) {
  std::function<void(ExitStatus)> on_exit;
  {
    std::lock_guard lock(mutex_);
    auto it = processes_.find(pid);
    if (it == processes_.end() || it->second.info.exited) return;
    it->second.info.exited = true;
    on_exit = std::move(it->second.callbacks.on_exit);
    it->second.callbacks = {};
  }
  if (on_exit) on_exit(status);
}

std::vector<FakeProcessLauncher::Launched> FakeProcessLauncher::launched() const {
  std::lock_guard lock(mutex_);
  std::vector<Launched> out;
  for (const auto& [pid, entry] : processes_) out.push_back(entry.info);
  return out;
}

std::vector<FakeProcessLauncher::SignalSent> FakeProcessLauncher::signals() const {
  std::lock_guard lock(mutex_);
  return signals_;
}

std::vector<std::pair<int64_t, std::chrono::milliseconds>> FakeProcessLauncher::terminations() const {
  std::lock_guard lock(mutex_);
  return terminations_;
}

}  // namespace ring
