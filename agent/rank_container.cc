#include "agent/rank_container.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

#include <spdlog/spdlog.h>

#include "agent/allocation_runner.h"
#include "agent/run_command.h"
#include "common/bind_mount_rule.h"

namespace ring {
namespace {

constexpr auto kRuntimeCommandTimeout = std::chrono::seconds(60);

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

}  // namespace

RankContainer::RankContainer(const RunnerContext& context, const proto::Start& start, std::string work_dir)
    : context_(context),
      start_(start),
      work_dir_(std::move(work_dir)),
      name_(ContainerName(context.container_scope, start.allocation_id, start.rank)),
      ids_("allocation=" + start.allocation_id + " rank=" + std::to_string(start.rank)) {}

Status RankContainer::Prepare(const UnixAccount& account) {
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
    if (const auto dir = ReachedOwnDir(m.host_path, context_.private_dirs))
      return Status(ErrorCode::kPermissionDenied, "bind_mounts: host_path " + m.host_path +
                                                      " reaches the agent's own folder " + *dir +
                                                      ", which trials may not mount");
  }
  if (!c.checkpoint_path.empty())
    if (Status s = MakeMountSource(c.checkpoint_path, context_.run_as.switch_users, account); !s.ok())
      return s;
  if (HasDetachedContainers(*runtime_)) {
    // A container of the same name left by an agent that died is in the way.
    (void)RunCommand(*context_.launcher, RemoveCommand(*runtime_, name_), ToEnvp(context_.inherited_env),
                     kRuntimeCommandTimeout);
  }
  return CheckImage();
}

Status RankContainer::CheckImage() {
  const proto::Container& c = *start_.container;
  needs_pull_ = false;
  if (!HasDetachedContainers(*runtime_)) return Status::Ok();  // apptainer pulls as it runs
  if (!c.force_pull) {
    auto exists = RunCommand(*context_.launcher, ImageExistsCommand(*runtime_, c.image),
                             ToEnvp(context_.inherited_env), kRuntimeCommandTimeout);
    if (exists.ok() && exists->ok()) return Status::Ok();
  }
  needs_pull_ = true;
  // The credentials go to the runtime in a file only the agent reads,
  // removed after the pull; never on a command line or in a log.
  if (!c.registry_auth.empty()) {
    const std::string auth_dir = AuthDir();
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
  return Status::Ok();
}

ProcessSpec RankContainer::PullSpec() const {
  const proto::Container& c = *start_.container;
  return ProcessSpec{PullCommand(*runtime_, c.image, c.registry_auth.empty() ? "" : AuthDir()), "",
                     ToEnvp(context_.inherited_env)};
}

void RankContainer::PullEnded() const {
  if (start_.container->registry_auth.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(AuthDir(), ec);
}

std::string RankContainer::PullFailure(const ExitStatus& exit, const std::string& last_error) const {
  std::string why = last_error;
  if (why.empty())
    why = exit.signal ? "killed by signal " + std::to_string(*exit.signal)
                      : std::string(runtime_name()) + " pull exited with code " +
                            std::to_string(exit.exit_code.value_or(-1));
  return "cannot pull image " + start_.container->image + ": " + why;
}

ProcessSpec RankContainer::Spec(const Environment& env, const UnixAccount& account) const {
  ContainerRun run;
  run.name = name_;
  run.work_dir = work_dir_;
  run.env = env;
  // A list runs as it is: the runtime finds argv[0] on the image's PATH (an
  // image need not have /usr/bin/env, which a bare rank's list goes through).
  run.command = start_.entrypoint_argv.empty() ? ShellCommand(start_.entrypoint) : start_.entrypoint_argv;
  run.slots = context_.slots;
  run.ulimits = ContainerUlimits();
  run.scope = context_.container_scope;
  run.env_file = work_dir_ + ".env";
  run.runtime_env = context_.inherited_env;
  run.terminal = start_.terminal;
  run.python_dir = context_.python_dir;
  std::optional<SwitchIds> ids;
  if (context_.run_as.switch_users) ids = SwitchIds{account.uid, account.gid, account.groups};
  // Podman and docker start the container as root and switch to --user in
  // it; apptainer runs as the process that starts it, which switches here.
  const bool detached = HasDetachedContainers(*runtime_);
  if (detached) run.user = ids;
  ContainerProcess process = ContainerRunCommand(*runtime_, start_, run);
  if (detached) {
    ::unlink(run.env_file.c_str());
    if (Status s = WritePrivateFile(run.env_file, process.env_file_text); !s.ok())
      spdlog::warn("[agent] {}: {}", ids_, s.message());  // the runtime then fails, saying why
  }
  // Podman and docker run as the agent, which may not enter the owner's
  // 0700 folder (root without CAP_DAC_OVERRIDE); -w sets the container's.
  ProcessSpec spec{std::move(process.argv), detached ? "" : work_dir_, ToEnvp(process.env)};
  if (!detached) spec.run_as = ids;
  return spec;
}

void RankContainer::Stop(std::chrono::milliseconds grace) const {
  if (!runtime_ || !HasDetachedContainers(*runtime_)) return;  // apptainer: the process group was the rank
  (void)RunCommand(*context_.launcher, StopCommand(*runtime_, name_, grace), ToEnvp(context_.inherited_env),
                   grace + kRuntimeCommandTimeout);
}

void RankContainer::Remove() const {
  if (!runtime_) return;
  if (HasDetachedContainers(*runtime_)) {
    // --rm removes an ended container; one whose runtime process was killed
    // may still run. A container that stops while `rm --force` kills it
    // fails that removal ("container state improper: stopped" from podman),
    // so a failed removal is tried again, a few times, a moment later.
    constexpr int kAttempts = 3;
    auto removed = RunCommand(*context_.launcher, RemoveCommand(*runtime_, name_),
                              ToEnvp(context_.inherited_env), kRuntimeCommandTimeout);
    for (int attempt = 1; attempt < kAttempts && (!removed.ok() || !removed->ok()); ++attempt) {
      std::this_thread::sleep_for(std::chrono::milliseconds(250 * attempt));
      removed = RunCommand(*context_.launcher, RemoveCommand(*runtime_, name_),
                           ToEnvp(context_.inherited_env), kRuntimeCommandTimeout);
    }
    if (!removed.ok() || !removed->ok()) {
      std::string why = removed.ok() ? removed->LastError() : removed.status().message();
      if (why.empty())  // the runtime said nothing: its exit is all there is
        why = removed->exit.signal ? "killed by signal " + std::to_string(*removed->exit.signal)
                                   : "exit code " + std::to_string(removed->exit.exit_code.value_or(-1));
      spdlog::warn("[agent] {}: cannot remove container {}: {}", ids_, name_, why);
    }
  }
  ::unlink((work_dir_ + ".env").c_str());
}

}  // namespace ring
