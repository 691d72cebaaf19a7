#include "agent/run_command.h"

#include <condition_variable>
#include <memory>
#include <mutex>

namespace ring {

std::string CommandResult::LastError() const {
  std::string text = err.empty() ? out : err;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  const auto nl = text.rfind('\n');
  return nl == std::string::npos ? text : text.substr(nl + 1);
}

Result<CommandResult> RunCommand(ProcessLauncher& launcher, std::vector<std::string> argv,
                                 std::vector<std::string> env, std::chrono::milliseconds timeout) {
  // Shared with the callbacks, which may outlive this call after a timeout.
  struct State {
    std::mutex mu;  // guards everything below
    std::condition_variable done_cv;
    CommandResult result;
    bool done = false;
  };
  auto state = std::make_shared<State>();
  ProcessCallbacks callbacks;
  callbacks.on_line = [state](OutputStream stream, std::string line) {
    std::lock_guard lock(state->mu);
    std::string& to = stream == OutputStream::kStdout ? state->result.out : state->result.err;
    if (to.size() + line.size() < kMaxCommandOutput) to += line + "\n";
  };
  callbacks.on_exit = [state](ExitStatus exit) {
    std::lock_guard lock(state->mu);
    state->result.exit = exit;
    state->done = true;
    state->done_cv.notify_all();
  };
  const std::string program = argv.empty() ? "" : argv.front();
  ProcessSpec spec{std::move(argv), "", std::move(env)};
  auto handle = launcher.Launch(spec, std::move(callbacks));
  if (!handle.ok()) return handle.status();
  std::unique_lock lock(state->mu);
  if (!state->done_cv.wait_for(lock, timeout, [&] { return state->done; })) {
    lock.unlock();
    launcher.Terminate(handle->pid, std::chrono::milliseconds(0));
    return Status(ErrorCode::kTimeout,
                  program + " did not answer within " + std::to_string(timeout.count() / 1000) + " s");
  }
  return state->result;
}

}  // namespace ring
