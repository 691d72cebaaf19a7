#include "agent/allocation_runner.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>

#include "agent/run_command.h"
#include "agent/work_folder.h"

namespace ring {
namespace {

int64_t UnixMillis() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

constexpr auto kRuntimeCommandTimeout = std::chrono::seconds(60);
constexpr auto kPullTimeout = std::chrono::minutes(30);

// Whether `path` is `dir` or below it (both lexically normal and absolute).
bool IsAtOrBelow(const std::filesystem::path& path, const std::filesystem::path& dir) {
  auto p = path.begin();
  for (auto d = dir.begin(); d != dir.end(); ++d, ++p) {
    if (d->empty()) continue;  // a trailing slash
    if (p == path.end() || *p != *d) return false;
  }
  return true;
}

// Writes `text` to a new file only the agent may read.
Status WritePrivateFile(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return Status(ErrorCode::kInternal, "cannot write " + path + ": " + std::strerror(errno));
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  if (!ok) return Status(ErrorCode::kInternal, "cannot write " + path);
  return Status::Ok();
}

// Makes the missing folders of `path` (0755), as a bare rank's runtime makes
// its checkpoint folder; those made are handed to `account` when `chown`.
// A runtime refuses to mount a source that does not exist.
Status MakeMountSource(const std::string& path, bool chown, const UnixAccount& account) {
  std::string at;
  for (const auto& part : std::filesystem::path(path).lexically_normal()) {
    if (part == "/") continue;
    if (part.empty()) continue;
    at += "/" + part.string();
    if (::mkdir(at.c_str(), 0755) == 0) {
      if (chown && ::lchown(at.c_str(), account.uid, account.gid) != 0)
        return Status(ErrorCode::kInternal, "cannot hand " + at + " to uid " + std::to_string(account.uid));
    } else if (errno != EEXIST) {
      return Status(ErrorCode::kUnavailable, "cannot make the folder " + at + ": " + std::strerror(errno));
    }
  }
  return Status::Ok();
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
      work_dir_(context.work_root + "/" + start_.allocation_id + ".r" + std::to_string(start_.rank)),
      on_done_(std::move(on_done)),
      flush_timer_(context.strand),
      batcher_(start_.allocation_id, start_.rank) {}

std::string AllocationRunner::Ids() const {
  return "allocation=" + start_.allocation_id + " rank=" + std::to_string(start_.rank) +
         " trial=" + std::to_string(start_.trial_id) + " experiment=" + std::to_string(start_.experiment_id);
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
  if (start_.container) return PrepareContainer();
  return Status::Ok();
}

std::string AllocationRunner::ContainerName() const {
  return "ring-" + start_.allocation_id + ".r" + std::to_string(start_.rank);
}

Status AllocationRunner::PrepareContainer() {
  const proto::Container& c = *start_.container;
  runtime_ = ChooseRuntime(context_.runtimes, c.runtime);
  if (!runtime_) {
    std::string have;
    for (const auto& r : context_.runtimes)
      have += (have.empty() ? "" : ", ") + std::string(ToString(r.kind));
    return Status(
        ErrorCode::kUnavailable,
        "cannot run image " + c.image + ": this agent has " +
            (c.runtime.empty() ? std::string("no container runtime")
                               : "no " + c.runtime + " (it has " + (have.empty() ? "none" : have) + ")"));
  }
  // The agent's own folders stay its own: no mount reaches them.
  for (const auto& m : c.mounts) {
    const std::filesystem::path host = std::filesystem::path(m.host_path).lexically_normal();
    if (!host.is_absolute() || m.host_path.find("..") != std::string::npos)
      return InvalidArgument("bind_mounts: host_path " + m.host_path +
                             " must be an absolute path without ..");
    for (const auto& dir : context_.private_dirs)
      if (!dir.empty() && (IsAtOrBelow(host, dir) || IsAtOrBelow(dir, host)))
        return Status(ErrorCode::kPermissionDenied, "bind_mounts: host_path " + m.host_path +
                                                        " reaches the agent's own folder " + dir +
                                                        ", which trials may not mount");
  }
  if (!c.checkpoint_path.empty())
    if (Status s = MakeMountSource(c.checkpoint_path, context_.run_as.switch_users, account_); !s.ok())
      return s;
  if (HasDetachedContainers(*runtime_)) {
    // A container of the same name left by an agent that died is in the way.
    (void)RunCommand(*context_.launcher, RemoveCommand(*runtime_, ContainerName()),
                     ToEnvp(context_.inherited_env), kRuntimeCommandTimeout);
  }
  return PullImage();
}

Status AllocationRunner::PullImage() {
  const proto::Container& c = *start_.container;
  const std::vector<std::string> env = ToEnvp(context_.inherited_env);
  if (!HasDetachedContainers(*runtime_)) return Status::Ok();  // apptainer pulls as it runs
  if (!c.force_pull) {
    auto exists =
        RunCommand(*context_.launcher, ImageExistsCommand(*runtime_, c.image), env, kRuntimeCommandTimeout);
    if (exists.ok() && exists->ok()) return Status::Ok();
  }
  // The credentials go to the runtime in a file only the agent reads,
  // removed after the pull; never on a command line or in a log.
  std::string auth_dir;
  if (!c.registry_auth.empty()) {
    auth_dir = work_dir_ + ".auth";
    std::error_code ec;
    std::filesystem::remove_all(auth_dir, ec);
    if (!std::filesystem::create_directory(auth_dir, ec))
      return Status(ErrorCode::kInternal,
                    "cannot make a folder for the registry credentials: " + ec.message());
    std::filesystem::permissions(auth_dir, std::filesystem::perms::owner_all, ec);
    if (Status s = WritePrivateFile(auth_dir + "/config.json", RegistryAuthJson(c.registry_auth, c.image));
        !s.ok())
      return s;
  }
  spdlog::info("[agent] {}: pulling image {} with {}", Ids(), c.image, ToString(runtime_->kind));
  auto pulled = RunCommand(*context_.launcher, PullCommand(*runtime_, c.image, auth_dir), env, kPullTimeout);
  if (!auth_dir.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(auth_dir, ec);
  }
  if (!pulled.ok())
    return Status(ErrorCode::kUnavailable, "cannot pull image " + c.image + ": " + pulled.status().message());
  if (!pulled->ok())
    return Status(ErrorCode::kUnavailable, "cannot pull image " + c.image + ": " + pulled->LastError());
  return Status::Ok();
}

ProcessSpec AllocationRunner::BareSpec(const Environment& env) const {
  ProcessSpec spec{
      start_.entrypoint_argv.empty() ? ShellCommand(start_.entrypoint) : ExecCommand(start_.entrypoint_argv),
      work_dir_, ToEnvp(env)};
  if (context_.run_as.switch_users) spec.run_as = SwitchIds{account_.uid, account_.gid, account_.groups};
  return spec;
}

ProcessSpec AllocationRunner::ContainerSpec(const Environment& env) const {
  ContainerRun run;
  run.name = ContainerName();
  run.work_dir = work_dir_;
  run.env = env;
  run.command =
      start_.entrypoint_argv.empty() ? ShellCommand(start_.entrypoint) : ExecCommand(start_.entrypoint_argv);
  run.slots = context_.slots;
  run.ulimits = ContainerUlimits();
  run.agent_id = context_.agent_id;
  run.env_file = work_dir_ + ".env";
  run.runtime_env = context_.inherited_env;
  std::optional<SwitchIds> ids;
  if (context_.run_as.switch_users) ids = SwitchIds{account_.uid, account_.gid, account_.groups};
  // Podman and docker start the container as root and switch to --user in
  // it; apptainer runs as the process that starts it, which switches here.
  const bool detached = HasDetachedContainers(*runtime_);
  if (detached) run.user = ids;
  ContainerProcess process = ContainerRunCommand(*runtime_, start_, run);
  if (detached) {
    ::unlink(run.env_file.c_str());
    if (Status s = WritePrivateFile(run.env_file, process.env_file_text); !s.ok())
      spdlog::warn("[agent] {}: {}", Ids(), s.message());  // the runtime then fails, saying why
  }
  ProcessSpec spec{std::move(process.argv), work_dir_, ToEnvp(process.env)};
  if (!detached) spec.run_as = ids;
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
  const AgentIdentity agent{context_.agent_id, context_.agent_address ? context_.agent_address() : "",
                            context_.ca_file, context_.python_dir};
  Environment base = context_.inherited_env;
  base["HOME"] = account_.home;
  base["USER"] = account_.user;
  base["LOGNAME"] = account_.user;
  Environment env = BuildTrialEnvironment(start_, context_.master_url, agent, context_.slots, base);
  ProcessSpec spec = runtime_ ? ContainerSpec(env) : BareSpec(env);
  spec.group = std::filesystem::path(work_dir_).filename().string();
  auto self = shared_from_this();
  ProcessCallbacks callbacks;
  callbacks.on_line = [self](OutputStream stream, std::string line) {
    self->OnLine(stream, std::move(line));
  };
  callbacks.on_exit = [self](ExitStatus exit) {
    boost::asio::post(self->context_.strand, [self, exit] { self->OnExit(exit); });
  };
  auto handle = context_.launcher->Launch(spec, std::move(callbacks));
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
  context_.sink->Send(std::move(change));
}

void AllocationRunner::Kill(std::chrono::milliseconds grace, const std::string& reason) {
  switch (phase_.load()) {
    case Phase::kPreparing:
      spdlog::info("[agent] {}: killed before its process started ({})", Ids(), reason);
      ReportExit(ExitStatus{std::nullopt, SIGTERM}, "killed before the process started: " + reason);
      break;
    case Phase::kRunning:
      spdlog::info("[agent] {}: terminating pid={} grace={}ms ({})", Ids(), pid_.load(), grace.count(),
                   reason);
      if (kill_reason_.empty()) kill_reason_ = reason.empty() ? "requested" : reason;
      context_.launcher->Terminate(pid_, grace);
      // The container is not a child of the process stopped above: the
      // runtime stops it the same way (SIGTERM, SIGKILL after the grace).
      if (runtime_ && HasDetachedContainers(*runtime_))
        boost::asio::post(context_.blocking, [self = shared_from_this(), grace] {
          (void)RunCommand(*self->context_.launcher,
                           StopCommand(*self->runtime_, self->ContainerName(), grace),
                           ToEnvp(self->context_.inherited_env), grace + kRuntimeCommandTimeout);
        });
      break;
    case Phase::kExited:
    case Phase::kDone:
      break;
  }
}

void AllocationRunner::Cleanup() {
  boost::asio::post(context_.blocking, [self = shared_from_this()] {
    // --rm removes an ended container; one whose runtime process was killed
    // may still run, and must be gone before its folder is.
    if (self->runtime_ && HasDetachedContainers(*self->runtime_)) {
      auto removed =
          RunCommand(*self->context_.launcher, RemoveCommand(*self->runtime_, self->ContainerName()),
                     ToEnvp(self->context_.inherited_env), kRuntimeCommandTimeout);
      if (!removed.ok() || !removed->ok())
        spdlog::warn("[agent] {}: cannot remove container {}: {}", self->Ids(), self->ContainerName(),
                     removed.ok() ? removed->LastError() : removed.status().message());
    }
    if (self->runtime_) ::unlink((self->work_dir_ + ".env").c_str());
    if (Status s = RemoveTree(self->work_dir_); !s.ok())
      spdlog::warn("[agent] {}: cannot remove its work folder: {}", self->Ids(), s.message());
    boost::asio::post(self->context_.strand, [self] {
      self->phase_ = Phase::kDone;
      self->on_done_();
    });
  });
}

}  // namespace ring
