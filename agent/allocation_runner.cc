#include "agent/allocation_runner.h"

#include "agent/terminal_hub.h"

#include <signal.h>

#include <cstdio>
#include <filesystem>

#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>

#include "agent/work_folder.h"

namespace ring {
namespace {

int64_t UnixMillis() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

std::string Describe(const ExitStatus& status) {
  if (status.signal) return "signal " + std::to_string(*status.signal);
  return "exit code " + std::to_string(status.exit_code.value_or(-1));
}

}  // namespace

bool IsSafePathComponent(const std::string& id) {
  if (id.empty() || id == "." || id == ".." || id.size() > 200) return false;
  for (char c : id) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

AllocationRunner::AllocationRunner(const RunnerContext& context, proto::Start start,
                                   std::function<void()> on_done)
    : context_(context),
      start_(std::move(start)),
      node_ranks_(NodeRanksOf(start_)),
      work_dir_(context.work_root + "/" + start_.allocation_id + ".r" + std::to_string(start_.rank)),
      container_(start_.container ? std::make_unique<RankContainer>(context_, start_, work_dir_) : nullptr),
      on_done_(std::move(on_done)),
      pull_deadline_(context.strand),
      flush_timer_(context.strand),
      batcher_(start_.allocation_id, start_.rank) {}

std::string AllocationRunner::Ids() const {
  const std::string ids = "allocation=" + start_.allocation_id + " rank=" + std::to_string(start_.rank);
  if (start_.task_kind != TaskKind::kTrial)
    return ids + " task=" + std::to_string(start_.task_id) +
           " kind=" + std::string(ToString(start_.task_kind));
  return ids + " trial=" + std::to_string(start_.trial_id) +
         " experiment=" + std::to_string(start_.experiment_id);
}

void AllocationRunner::SendState(proto::ProcessState state) {
  proto::StateChange change;
  change.allocation_id = start_.allocation_id;
  change.rank = start_.rank;
  change.state = state;
  context_.sink->Send(std::move(change));
}

void AllocationRunner::Begin() {
  spdlog::info("[agent] {}: starting for owner \"{}\"", Ids(), start_.owner);
  SendState(proto::ProcessState::kStarting);
  if (!IsSafePathComponent(start_.allocation_id)) {
    ReportExit(ExitStatus{1, std::nullopt}, "invalid allocation id \"" + start_.allocation_id + "\"");
    phase_ = Phase::kDone;
    boost::asio::post(context_.strand, [self = shared_from_this()] { self->on_done_(); });
    return;
  }
  boost::asio::post(context_.blocking, [self = shared_from_this()] {
    Status status = self->Prepare();
    boost::asio::post(self->context_.strand, [self, status] { self->OnPrepared(status); });
  });
}

Status AllocationRunner::Prepare() {
  auto account = AccountFor(context_.run_as, start_);
  if (!account.ok()) return account.status();
  account_ = *account;
  if (Status s = MakeWorkDir(work_dir_); !s.ok()) return s;
  // Unpacked by the agent into a folder only it can enter, then handed over.
  if (Status s = context_.fetcher->Fetch(start_, work_dir_); !s.ok()) return s;
  if (context_.run_as.switch_users)
    if (Status s = ChownTree(work_dir_, account_.uid, account_.gid); !s.ok()) return s;
  if (container_) return container_->Prepare(account_);
  return Status::Ok();
}

ProcessSpec AllocationRunner::BareSpec(const Environment& env) const {
  ProcessSpec spec{
      start_.entrypoint_argv.empty() ? ShellCommand(start_.entrypoint) : ExecCommand(start_.entrypoint_argv),
      work_dir_, ToEnvp(env)};
  if (context_.run_as.switch_users) spec.run_as = SwitchIds{account_.uid, account_.gid, account_.groups};
  spec.ignore_sigterm = context_.ranks_ignore_sigterm;
  return spec;
}

void AllocationRunner::OnPrepared(const Status& status) {
  if (phase_ == Phase::kExited) {  // killed while preparing; exited was already reported
    Cleanup();
    return;
  }
  if (!status.ok()) {
    spdlog::warn("[agent] {}: {}", Ids(), status.message());
    ReportExit(ExitStatus{1, std::nullopt}, status.message());
    Cleanup();
    return;
  }
  if (container_ && container_->needs_pull()) {
    StartPull();
    return;
  }
  LaunchRank();
}

void AllocationRunner::SendAgentLine(std::string line) {
  std::lock_guard lock(log_mutex_);
  if (auto full =
          batcher_.Add(proto::LogLine{UnixMillis(), "stdout", std::move(line)}, LogBatcher::Clock::now()))
    context_.sink->Send(std::move(*full));
  if (auto batch = batcher_.Flush()) context_.sink->Send(std::move(*batch));
}

void AllocationRunner::StartPull() {
  // What the rank's log shows while it stays starting.
  const std::string what =
      std::string("pulling image ") + container_->image() + " with " + container_->runtime_name();
  spdlog::info("[agent] {}: {}", Ids(), what);
  SendAgentLine("[agent " + context_.agent_id + "] " + what);
  // The pull's last error line, for the message of a failed pull; written
  // on the launcher's thread.
  struct Errors {
    std::mutex mu;
    std::string last;
  };
  auto errors = std::make_shared<Errors>();
  auto self = shared_from_this();
  ProcessCallbacks callbacks;
  callbacks.on_line = [errors](OutputStream stream, std::string line) {
    if (stream != OutputStream::kStderr || line.empty()) return;
    std::lock_guard lock(errors->mu);
    errors->last = std::move(line);
  };
  callbacks.on_exit = [self, errors](ExitStatus exit) {
    self->container_->PullEnded();
    std::string last;
    {
      std::lock_guard lock(errors->mu);
      last = errors->last;
    }
    boost::asio::post(self->context_.strand, [self, exit, last] { self->OnPulled(exit, last); });
  };
  auto handle = context_.launcher->Launch(container_->PullSpec(), std::move(callbacks));
  if (!handle.ok()) {
    container_->PullEnded();
    const std::string message = "cannot pull image " + container_->image() + ": " + handle.status().message();
    spdlog::warn("[agent] {}: {}", Ids(), message);
    ReportExit(ExitStatus{1, std::nullopt}, message);
    Cleanup();
    return;
  }
  pull_pid_ = handle->pid;
  pull_started_ = std::chrono::steady_clock::now();
  pull_deadline_.expires_after(kPullTimeout);
  pull_deadline_.async_wait([self](boost::system::error_code ec) {
    if (ec || self->pull_pid_ == 0) return;
    self->pull_timed_out_ = true;
    self->context_.launcher->Terminate(self->pull_pid_, std::chrono::seconds(5));
  });
}

void AllocationRunner::OnPulled(const ExitStatus& exit, const std::string& last_error) {
  pull_pid_ = 0;
  pull_deadline_.cancel();
  if (phase_ == Phase::kExited) {  // killed while pulling; exited was already reported
    Cleanup();
    return;
  }
  const bool ok = exit.exit_code && *exit.exit_code == 0;
  if (!ok) {
    const std::string message = pull_timed_out_
                                    ? "cannot pull image " + container_->image() + ": not done after " +
                                          std::to_string(kPullTimeout.count()) + " minutes"
                                    : container_->PullFailure(exit, last_error);
    spdlog::warn("[agent] {}: {}", Ids(), message);
    ReportExit(ExitStatus{1, std::nullopt}, message);
    Cleanup();
    return;
  }
  const auto seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - pull_started_).count();
  char took[32];
  std::snprintf(took, sizeof took, "%.1f", seconds);
  spdlog::info("[agent] {}: pulled image {} in {} s", Ids(), container_->image(), took);
  SendAgentLine("[agent " + context_.agent_id + "] pulled image " + container_->image() + " in " + took +
                " s");
  LaunchRank();
}

void AllocationRunner::LaunchRank() {
  const AgentIdentity agent{context_.agent_id, context_.agent_address ? context_.agent_address() : "",
                            context_.ca_file, context_.python_dir};
  Environment base = context_.inherited_env;
  base["HOME"] = account_.home;
  base["USER"] = account_.user;
  base["LOGNAME"] = account_.user;
  if (start_.terminal) {
    // A shell: its owner's login shell, and a terminal xterm.js and
    // ring's client both speak.
    base["SHELL"] = account_.shell.empty() ? "/bin/sh" : account_.shell;
    base["TERM"] = "xterm-256color";
  }
  Environment env = BuildTrialEnvironment(start_, context_.master_url, agent, context_.slots, base);
  ProcessSpec spec = container_ ? container_->Spec(env, account_) : BareSpec(env);
  spec.group = std::filesystem::path(work_dir_).filename().string();
  auto self = shared_from_this();
  ProcessCallbacks callbacks;
  callbacks.on_line = [self](OutputStream stream, std::string line) {
    self->OnLine(stream, std::move(line));
  };
  callbacks.on_exit = [self](ExitStatus exit) {
    boost::asio::post(self->context_.strand, [self, exit] { self->OnExit(exit); });
  };
  // A shell's rank runs in a terminal whose output goes to the clients
  // attached to it (terminal_hub.h), from its first prompt on; in a
  // container, the runtime's process holds that terminal and relays it.
  const bool terminal = start_.terminal && context_.terminals;
  if (start_.terminal && !terminal) {
    ReportExit(ExitStatus{127, std::nullopt}, "this agent has no terminals");
    Cleanup();
    return;
  }
  if (terminal) {
    spec.terminal = TerminalSize{};
    context_.terminals->Add(start_.allocation_id, start_.rank, 0);
    callbacks.on_terminal_output = [self](std::string bytes) {
      self->context_.terminals->Output(self->start_.allocation_id, self->start_.rank, bytes);
    };
  }
  auto handle = context_.launcher->Launch(spec, std::move(callbacks));
  if (terminal) {
    if (handle.ok())
      context_.terminals->Add(start_.allocation_id, start_.rank, handle->pid);
    else
      context_.terminals->Remove(start_.allocation_id, start_.rank);
  }
  if (!handle.ok()) {
    std::string message = "cannot start the entrypoint: " + handle.status().message();
    spdlog::warn("[agent] {}: {}", Ids(), message);
    ReportExit(ExitStatus{127, std::nullopt}, message);
    Cleanup();
    return;
  }
  pid_ = handle->pid;
  phase_ = Phase::kRunning;
  spdlog::info("[agent] {}: running pid={} as {} (uid {}) in {}", Ids(), handle->pid, account_.user,
               account_.uid, work_dir_);
  SendState(proto::ProcessState::kRunning);
}

void AllocationRunner::OnLine(OutputStream stream, std::string line) {
  proto::LogLine entry{UnixMillis(), ToString(stream), std::move(line)};
  // A per-node process's worker line "[rank=N] ..." is rank N's (wrap_rank).
  entry.rank = TakeRankPrefix(entry.line, node_ranks_);
  bool arm = false;
  {
    // Sending under the lock keeps batches in seq order between this thread and the flush timer.
    std::lock_guard lock(log_mutex_);
    bool was_empty = batcher_.empty();
    if (auto full = batcher_.Add(std::move(entry), LogBatcher::Clock::now()))
      context_.sink->Send(std::move(*full));
    arm = was_empty && !batcher_.empty();
  }
  if (arm) boost::asio::post(context_.strand, [self = shared_from_this()] { self->ArmFlushTimer(); });
}

void AllocationRunner::ArmFlushTimer() {
  if (flush_timer_armed_ || phase_ != Phase::kRunning) return;
  LogBatcher::Clock::time_point due;
  {
    std::lock_guard lock(log_mutex_);
    if (batcher_.empty()) return;
    due = batcher_.due();
  }
  flush_timer_armed_ = true;
  flush_timer_.expires_at(due);
  flush_timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
    self->flush_timer_armed_ = false;
    if (ec) return;
    {
      std::lock_guard lock(self->log_mutex_);
      if (auto batch = self->batcher_.TakeIfDue(LogBatcher::Clock::now()))
        self->context_.sink->Send(std::move(*batch));
    }
    self->ArmFlushTimer();  // lines that arrived since are due later
  });
}

void AllocationRunner::OnExit(const ExitStatus& status) {
  if (start_.terminal && context_.terminals) context_.terminals->Remove(start_.allocation_id, start_.rank);
  {
    std::lock_guard lock(log_mutex_);
    if (auto batch = batcher_.Flush()) context_.sink->Send(std::move(*batch));
  }
  flush_timer_.cancel();
  std::string message = kill_reason_.empty() ? "" : "killed: " + kill_reason_;
  spdlog::info("[agent] {}: exited with {}{}", Ids(), Describe(status),
               message.empty() ? "" : " (" + message + ")");
  ReportExit(status, message);
  Cleanup();
}

void AllocationRunner::ReportExit(const ExitStatus& status, const std::string& message) {
  phase_ = Phase::kExited;
  proto::StateChange change;
  change.allocation_id = start_.allocation_id;
  change.rank = start_.rank;
  change.state = proto::ProcessState::kExited;
  change.exit_code = status.exit_code;
  change.signal = status.signal;
  change.message = message;
  change.agent_stopping = agent_stopping_;
  context_.sink->Send(std::move(change));
}

void AllocationRunner::Kill(std::chrono::milliseconds grace, const std::string& reason) {
  switch (phase_.load()) {
    case Phase::kPreparing:
      spdlog::info("[agent] {}: killed before its process started ({})", Ids(), reason);
      // A pull under way is stopped before the end is reported, so nothing
      // of the rank still runs once the master hears it ended; the rank's
      // folder goes when the pull has ended.
      if (pull_pid_ != 0) {
        spdlog::info("[agent] {}: stopping the pull of image {} pid={}", Ids(), container_->image(),
                     pull_pid_);
        context_.launcher->Terminate(pull_pid_, std::chrono::seconds(5));
      }
      ReportExit(ExitStatus{std::nullopt, SIGTERM}, "killed before the process started: " + reason);
      break;
    case Phase::kRunning:
      spdlog::info("[agent] {}: terminating pid={} grace={}ms ({})", Ids(), pid_.load(), grace.count(),
                   reason);
      if (kill_reason_.empty()) kill_reason_ = reason.empty() ? "requested" : reason;
      context_.launcher->Terminate(pid_, grace);
      // The container is not a child of the process stopped above: its
      // runtime stops it the same way (SIGTERM, SIGKILL after the grace).
      if (container_)
        boost::asio::post(context_.blocking,
                          [self = shared_from_this(), grace] { self->container_->Stop(grace); });
      break;
    case Phase::kExited:
    case Phase::kDone:
      break;
  }
}

void AllocationRunner::Cleanup() {
  boost::asio::post(context_.blocking, [self = shared_from_this()] {
    // Before the folder it mounts.
    if (self->container_) self->container_->Remove();
    if (Status s = RemoveTree(self->work_dir_); !s.ok())
      spdlog::warn("[agent] {}: cannot remove its work folder: {}", self->Ids(), s.message());
    boost::asio::post(self->context_.strand, [self] {
      self->phase_ = Phase::kDone;
      self->on_done_();
    });
  });
}

}  // namespace ring
