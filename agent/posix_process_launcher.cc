#include "agent/posix_process_launcher.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <thread>
#include <utility>

#include <linux/capability.h>

#include "agent/line_splitter.h"

namespace ring {
namespace {

using Clock = std::chrono::steady_clock;
// How often the watcher looks at the kill deadline, and at the leader when
// it has no pidfd to wait on.
constexpr auto kPollInterval = std::chrono::milliseconds(50);
// After the leader exited and its group was killed, how long to wait for
// the pipes to reach end of file (a process that left the group may hold them).
constexpr auto kDrainTimeout = std::chrono::seconds(2);

// A descriptor that becomes readable when `pid` exits (Linux 5.3+), or -1.
// Without it the watcher notices an exit only at its next poll interval:
// the pipes reach end of file just before the process becomes waitable.
int OpenPidFd(pid_t pid) {
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
}

void CloseFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// The pipe pairs made for one launch, closed on every early return.
struct Pipes {
  int out[2] = {-1, -1};
  int err[2] = {-1, -1};
  int exec_error[2] = {-1, -1};  // the child writes errno here when exec fails
  int dev_null = -1;
  int cgroup_procs = -1;  // the containment group's cgroup.procs, or -1
  int pty_master = -1;    // a process with a terminal: its pseudo-terminal's two sides
  int pty_slave = -1;
  ~Pipes() {
    for (int* fd : {&out[0], &out[1], &err[0], &err[1], &exec_error[0], &exec_error[1], &dev_null,
                    &cgroup_procs, &pty_master, &pty_slave})
      CloseFd(*fd);
  }
};

// A new pseudo-terminal of `size` (both sides close-on-exec), its slave
// side owned by `uid` when not -1, as a login's terminal is.
Status OpenTerminal(Pipes& p, TerminalSize size, uid_t uid) {
  p.pty_master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (p.pty_master < 0) return Internal(std::string("posix_openpt: ") + std::strerror(errno));
  char name[128];
  if (::grantpt(p.pty_master) != 0 || ::unlockpt(p.pty_master) != 0 ||
      ::ptsname_r(p.pty_master, name, sizeof name) != 0)
    return Internal(std::string("cannot set up a pseudo-terminal: ") + std::strerror(errno));
  p.pty_slave = ::open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (p.pty_slave < 0) return Internal(std::string("open ") + name + ": " + std::strerror(errno));
  if (uid != static_cast<uid_t>(-1) && ::fchown(p.pty_slave, uid, static_cast<gid_t>(-1)) != 0)
    return Internal(std::string("cannot give ") + name + " to its user: " + std::strerror(errno));
  winsize ws{};
  ws.ws_row = size.rows;
  ws.ws_col = size.cols;
  if (::ioctl(p.pty_master, TIOCSWINSZ, &ws) != 0)
    return Internal(std::string("cannot size the terminal: ") + std::strerror(errno));
  return Status::Ok();
}

// What the child switches to, prepared before fork.
struct ChildIds {
  bool switch_user = false;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
};

// Drops every capability of the calling process (permitted, effective,
// inheritable and ambient), so that nothing passes through exec. Raw system
// calls: the child of a threaded process may not use libc's setxid helpers.
bool DropCapabilities() {
  ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  return ::syscall(SYS_capset, &header, data) == 0;
}

// What the child was doing when it failed, reported with errno.
enum class ChildStep { kSetup, kJoinGroup, kSwitchUser, kDropCapabilities, kRegainedRoot, kChdir, kExec };

const char* Describe(ChildStep step) {
  switch (step) {
    case ChildStep::kSetup:
      return "cannot set up its descriptors";
    case ChildStep::kJoinGroup:
      return "cannot join its cgroup";
    case ChildStep::kSwitchUser:
      return "cannot switch to its Unix account";
    case ChildStep::kDropCapabilities:
      return "cannot drop the agent's capabilities";
    case ChildStep::kRegainedRoot:
      return "could become root again after switching users";
    case ChildStep::kChdir:
      return "cannot enter its working directory";
    case ChildStep::kExec:
      return "cannot execute the program";
  }
  return "cannot start";
}

// Runs in the child between fork and exec: async-signal-safe calls only.
[[noreturn]] void ExecChild(const Pipes& p, const ChildIds& ids, const char* cwd, char* const* argv,
                            char* const* envp, bool ignore_sigterm) {
  const bool terminal = p.pty_slave >= 0;
  ChildStep step = ChildStep::kSetup;
  auto fail = [&](int err) {
    int report[2] = {static_cast<int>(step), err};
    ssize_t unused = ::write(p.exec_error[1], report, sizeof(report));
    (void)unused;
    _exit(127);
  };
  if (terminal) {
    // A session of its own, whose controlling terminal is the new one: the
    // terminal's Ctrl-C reaches its foreground job, and the session leader
    // leads a process group of its own id, as without a terminal.
    if (::setsid() < 0 || ::ioctl(p.pty_slave, TIOCSCTTY, 0) != 0) fail(errno);
  } else {
    ::setpgid(0, 0);
  }
  // Into the containment group first, before anything can fork.
  step = ChildStep::kJoinGroup;
  if (p.cgroup_procs >= 0 && ::write(p.cgroup_procs, "0", 1) != 1) fail(errno);
  step = ChildStep::kSwitchUser;
  if (ids.switch_user) {
    // Groups first (they need the rights setuid gives up), then the gid, then
    // the uid: real, effective and saved, so there is no way back.
    if (::syscall(SYS_setgroups, ids.groups.size(), ids.groups.data()) != 0) fail(errno);
    if (::syscall(SYS_setresgid, ids.gid, ids.gid, ids.gid) != 0) fail(errno);
    if (::syscall(SYS_setresuid, ids.uid, ids.uid, ids.uid) != 0) fail(errno);
  }
  // An agent given capabilities (CAP_SETUID under systemd) hands none on.
  step = ChildStep::kDropCapabilities;
  if (!DropCapabilities()) fail(errno);
  step = ChildStep::kRegainedRoot;
  if (ids.switch_user && ids.uid != 0) {
    // Proof there is no way back: becoming root again must fail.
    if (::syscall(SYS_setresuid, 0, 0, 0) == 0 || ::syscall(SYS_setresgid, 0, 0, 0) == 0) fail(EPERM);
  }
  if (terminal) {
    if (::dup2(p.pty_slave, 0) < 0 || ::dup2(p.pty_slave, 1) < 0 || ::dup2(p.pty_slave, 2) < 0) fail(errno);
  } else if (::dup2(p.dev_null, 0) < 0 || ::dup2(p.out[1], 1) < 0 || ::dup2(p.err[1], 2) < 0) {
    fail(errno);
  }
  // Keep only 0-2 and the exec error pipe (moved to 3, close-on-exec): the
  // agent's sockets must not leak into trials.
  if (p.exec_error[1] != 3 && ::dup2(p.exec_error[1], 3) < 0) fail(errno);
  ::fcntl(3, F_SETFD, FD_CLOEXEC);
  ::close_range(4, ~0U, 0);
  const_cast<Pipes&>(p).exec_error[1] = 3;
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int s = 1; s < NSIG; ++s) ::signal(s, SIG_DFL);
  if (ignore_sigterm) ::signal(SIGTERM, SIG_IGN);
  step = ChildStep::kChdir;
  if (cwd[0] != '\0' && ::chdir(cwd) != 0) fail(errno);
  step = ChildStep::kExec;
  ::execve(argv[0], argv, envp);
  fail(errno);
  _exit(127);
}

}  // namespace

struct PosixProcessLauncher::Process {
  int64_t pid = 0;
  std::string group;  // containment group, empty for none
  int out_fd = -1;
  int err_fd = -1;
  int pid_fd = -1;
  // A process with a terminal: out_fd is its pseudo-terminal's master side
  // (what it writes), terminal_fd another descriptor of it for typing and
  // resizing, closed under the launcher's mutex_ when the process is reaped.
  bool terminal = false;
  int terminal_fd = -1;
  ProcessCallbacks callbacks;
  // Guarded by the launcher's mutex_:
  bool reaped = false;
  std::optional<Clock::time_point> kill_deadline;
  std::atomic<bool> finished{false};  // the watcher returned from on_exit
  std::thread watcher;
};

PosixProcessLauncher::~PosixProcessLauncher() {
  std::unordered_map<int64_t, std::shared_ptr<Process>> processes;
  {
    std::lock_guard lock(mutex_);
    for (auto& [pid, process] : processes_) {
      if (!process->reaped) ::kill(-static_cast<pid_t>(pid), SIGKILL);
    }
    processes.swap(processes_);
  }
  for (auto& [pid, process] : processes) {
    if (process->watcher.joinable()) process->watcher.join();
  }
  containment_.RemoveRoot();
}

Result<ProcessHandle> PosixProcessLauncher::Launch(const ProcessSpec& spec, ProcessCallbacks callbacks) {
  if (spec.argv.empty() || spec.argv[0].empty() || spec.argv[0][0] != '/')
    return InvalidArgument("the program must be an absolute path");
  // Everything the child needs is prepared before fork.
  std::vector<char*> argv;
  for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const auto& e : spec.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  Pipes p;
  if (::pipe2(p.out, O_CLOEXEC) != 0 || ::pipe2(p.err, O_CLOEXEC) != 0 ||
      ::pipe2(p.exec_error, O_CLOEXEC) != 0)
    return Internal(std::string("pipe: ") + std::strerror(errno));
  p.dev_null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (p.dev_null < 0) return Internal(std::string("open /dev/null: ") + std::strerror(errno));
  ChildIds ids;
  if (spec.run_as) {
    ids.switch_user = true;
    ids.uid = static_cast<uid_t>(spec.run_as->uid);
    ids.gid = static_cast<gid_t>(spec.run_as->gid);
    ids.groups.assign(spec.run_as->groups.begin(), spec.run_as->groups.end());
  }
  if (spec.terminal)
    if (Status s = OpenTerminal(p, *spec.terminal, ids.switch_user ? ids.uid : static_cast<uid_t>(-1));
        !s.ok())
      return s;
  if (!spec.group.empty()) {
    auto procs = containment_.Create(spec.group);
    if (!procs.ok()) return procs.status();
    p.cgroup_procs = *procs;
  }

  std::lock_guard lock(mutex_);
  JoinFinishedLocked();
  pid_t pid = ::fork();
  if (pid < 0) {
    Status failed(ErrorCode::kUnavailable, std::string("fork: ") + std::strerror(errno));
    if (!spec.group.empty()) containment_.Remove(spec.group);
    return failed;
  }
  if (pid == 0) ExecChild(p, ids, spec.cwd.c_str(), argv.data(), envp.data(), spec.ignore_sigterm);

  // Also in the parent, so a signal sent right away reaches the group; not
  // for a session leader to be, whose setsid would fail once it led a group.
  if (!spec.terminal) ::setpgid(pid, pid);
  CloseFd(p.pty_slave);
  CloseFd(p.out[1]);
  CloseFd(p.err[1]);
  CloseFd(p.exec_error[1]);
  int report[2] = {0, 0};  // ChildStep, errno
  ssize_t n;
  do {
    n = ::read(p.exec_error[0], report, sizeof(report));
  } while (n < 0 && errno == EINTR);
  if (n > 0) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!spec.group.empty()) containment_.Remove(spec.group);
    std::string what = spec.cwd.empty() ? spec.argv[0] : spec.argv[0] + " in " + spec.cwd;
    return Status(ErrorCode::kInvalidArgument, "cannot start " + what + ": " +
                                                   Describe(static_cast<ChildStep>(report[0])) + ": " +
                                                   std::strerror(report[1]));
  }

  auto process = std::make_shared<Process>();
  process->pid = pid;
  process->group = spec.group;
  if (spec.terminal) {
    process->terminal = true;
    // Non-blocking (both descriptors share it): typing never holds the
    // launcher's lock for longer than WriteTerminal allows.
    ::fcntl(p.pty_master, F_SETFL, ::fcntl(p.pty_master, F_GETFL) | O_NONBLOCK);
    process->terminal_fd = ::fcntl(p.pty_master, F_DUPFD_CLOEXEC, 0);
    process->out_fd = std::exchange(p.pty_master, -1);
  } else {
    process->out_fd = std::exchange(p.out[0], -1);
    process->err_fd = std::exchange(p.err[0], -1);
  }
  process->pid_fd = OpenPidFd(pid);
  process->callbacks = std::move(callbacks);
  processes_[pid] = process;
  process->watcher = std::thread([this, process] { Watch(process); });
  return ProcessHandle{pid};
}

Status PosixProcessLauncher::Signal(int64_t pid, int signal) {
  std::lock_guard lock(mutex_);
  auto it = processes_.find(pid);
  if (it == processes_.end() || it->second->reaped)
    return NotFound("process " + std::to_string(pid) + " has ended");
  if (::kill(-static_cast<pid_t>(pid), signal) != 0 && errno != ESRCH)
    return Internal("kill: " + std::string(std::strerror(errno)));
  return Status::Ok();
}

void PosixProcessLauncher::Terminate(int64_t pid, std::chrono::milliseconds grace) {
  std::lock_guard lock(mutex_);
  auto it = processes_.find(pid);
  if (it == processes_.end() || it->second->reaped) return;
  auto deadline = Clock::now() + grace;
  if (grace.count() <= 0) {
    ::kill(-static_cast<pid_t>(pid), SIGKILL);
    return;
  }
  ::kill(-static_cast<pid_t>(pid), SIGTERM);
  // Those that left the process group are asked too.
  if (!it->second->group.empty()) containment_.SignalAll(it->second->group, SIGTERM);
  auto& current = it->second->kill_deadline;
  if (!current || deadline < *current) current = deadline;
}

Status PosixProcessLauncher::WriteTerminal(int64_t pid, std::string_view bytes) {
  std::lock_guard lock(mutex_);
  auto it = processes_.find(pid);
  if (it == processes_.end() || it->second->reaped)
    return NotFound("process " + std::to_string(pid) + " has ended");
  if (!it->second->terminal || it->second->terminal_fd < 0) return Conflict("the process has no terminal");
  // The terminal takes what a person types at once; a paste larger than its
  // input queue waits for the process to read, up to a second.
  const int fd = it->second->terminal_fd;
  size_t done = 0;
  const auto deadline = Clock::now() + std::chrono::seconds(1);
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n > 0) {
      done += static_cast<size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && errno == EAGAIN && Clock::now() < deadline) {
      pollfd pfd{fd, POLLOUT, 0};
      ::poll(&pfd, 1, 50);
    } else {
      return Unavailable("the terminal takes no more input: " + std::string(std::strerror(errno)));
    }
  }
  return Status::Ok();
}

Status PosixProcessLauncher::ResizeTerminal(int64_t pid, TerminalSize size) {
  std::lock_guard lock(mutex_);
  auto it = processes_.find(pid);
  if (it == processes_.end() || it->second->reaped)
    return NotFound("process " + std::to_string(pid) + " has ended");
  if (!it->second->terminal || it->second->terminal_fd < 0) return Conflict("the process has no terminal");
  winsize ws{};
  ws.ws_row = size.rows;
  ws.ws_col = size.cols;
  if (::ioctl(it->second->terminal_fd, TIOCSWINSZ, &ws) != 0)
    return Internal("cannot resize the terminal: " + std::string(std::strerror(errno)));
  return Status::Ok();
}

void PosixProcessLauncher::JoinFinishedLocked() {
  for (auto it = processes_.begin(); it != processes_.end();) {
    if (it->second->finished.load()) {
      if (it->second->watcher.joinable()) it->second->watcher.join();
      it = processes_.erase(it);
    } else {
      ++it;
    }
  }
}

void PosixProcessLauncher::Watch(const std::shared_ptr<Process>& process) {
  const pid_t pid = static_cast<pid_t>(process->pid);
  LineSplitter splitters[2];
  int fds[2] = {process->out_fd, process->err_fd};
  const OutputStream streams[2] = {OutputStream::kStdout, OutputStream::kStderr};
  auto emit = [&](int i, std::vector<std::string> lines) {
    for (auto& line : lines)
      if (process->callbacks.on_line) process->callbacks.on_line(streams[i], std::move(line));
  };
  bool leader_exited = false;
  Clock::time_point drain_deadline;
  char buffer[16384];

  while (true) {
    pollfd pfds[3];
    int slots[3];
    nfds_t n = 0;
    for (int i = 0; i < 2; ++i) {
      if (fds[i] < 0) continue;
      pfds[n] = {fds[i], POLLIN, 0};
      slots[n++] = i;
    }
    if (!leader_exited && process->pid_fd >= 0) {
      pfds[n] = {process->pid_fd, POLLIN, 0};
      slots[n++] = -1;  // only wakes the loop: waitid below tells
    }
    int ready = ::poll(pfds, n, static_cast<int>(kPollInterval.count()));
    if (ready > 0) {
      for (nfds_t k = 0; k < n; ++k) {
        if (pfds[k].revents == 0 || slots[k] < 0) continue;
        int i = slots[k];
        ssize_t got = ::read(fds[i], buffer, sizeof(buffer));
        if (got > 0 && process->terminal) {
          if (process->callbacks.on_terminal_output)
            process->callbacks.on_terminal_output(std::string(buffer, static_cast<size_t>(got)));
        } else if (got > 0) {
          emit(i, splitters[i].Feed(std::string_view(buffer, static_cast<size_t>(got))));
        } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
          // (A terminal's master side reads EIO once no process holds its other side.)
          emit(i, splitters[i].Finish());
          CloseFd(fds[i]);
        }
      }
    }
    bool kill_now = false;
    {
      std::lock_guard lock(mutex_);
      if (!leader_exited && process->kill_deadline && Clock::now() >= *process->kill_deadline) {
        ::kill(-pid, SIGKILL);
        process->kill_deadline.reset();
        kill_now = true;
      }
    }
    if (kill_now && !process->group.empty()) containment_.KillAll(process->group);
    if (!leader_exited) {
      // WNOWAIT keeps the zombie, so its pid (and group id) cannot be reused
      // while the stragglers of its group are killed.
      siginfo_t info{};
      if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
          info.si_pid == pid) {
        leader_exited = true;
        CloseFd(process->pid_fd);
        ::kill(-pid, SIGKILL);
        // And whatever left the group (setsid, double fork) but not the cgroup.
        if (!process->group.empty() && !containment_.KillAll(process->group))
          emit(1, {"ringagent: some processes of this trial could not be killed"});
        drain_deadline = Clock::now() + kDrainTimeout;
      }
    }
    if (leader_exited && ((fds[0] < 0 && fds[1] < 0) || Clock::now() >= drain_deadline)) break;
  }
  for (int i = 0; i < 2; ++i) {
    if (fds[i] >= 0) emit(i, splitters[i].Finish());
    CloseFd(fds[i]);
  }
  CloseFd(process->pid_fd);

  int status = 0;
  {
    std::lock_guard lock(mutex_);
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    process->reaped = true;
    CloseFd(process->terminal_fd);
  }
  if (!process->group.empty()) containment_.Remove(process->group);
  ExitStatus exit;
  if (WIFSIGNALED(status)) {
    exit.signal = WTERMSIG(status);
  } else {
    exit.exit_code = WEXITSTATUS(status);
  }
  if (process->callbacks.on_exit) process->callbacks.on_exit(exit);
  process->callbacks = {};
  process->finished = true;
}

}  // namespace ring
