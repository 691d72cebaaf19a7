#include "master/rm/slurmrm/slurm_commands.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace ring {
namespace {

constexpr size_t kMaxOutput = 16 << 20;

std::string FirstLine(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  return line.size() > 300 ? line.substr(0, 300) : line;
}

Status Failed(const std::string& what, const CommandOutput& r) {
  if (r.exit_code == -1 && r.err.empty()) return Unavailable(what + " did not finish (timed out or killed)");
  return Unavailable(what + " exited " + std::to_string(r.exit_code) + ": " + FirstLine(r.err + r.out));
}

// Writes `text` to a new file readable (and for a script executable) by
// this account only.
Status WritePrivateFile(const std::string& path, const std::string& text, mode_t mode) {
  std::error_code ec;
  std::filesystem::remove(path, ec);
  {
    std::ofstream out(path, std::ios::trunc);
    if (!out) return Internal("cannot write " + path);
    out << text;
    if (!out) return Internal("cannot write " + path);
  }
  if (chmod(path.c_str(), mode) != 0) return Internal("cannot chmod " + path);
  return Status::Ok();
}

}  // namespace

CommandOutput RunProgram(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                         const std::string& input) {
  CommandOutput result;
  int out[2], err[2], in[2] = {-1, -1};
  if (pipe2(out, O_CLOEXEC) != 0) return result;
  if (pipe2(err, O_CLOEXEC) != 0) {
    close(out[0]);
    close(out[1]);
    return result;
  }
  if (!input.empty() && pipe2(in, O_CLOEXEC) != 0) {
    for (int fd : {out[0], out[1], err[0], err[1]}) close(fd);
    return result;
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    const int null = input.empty() ? open("/dev/null", O_RDONLY) : in[0];
    dup2(null, 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    execvp(args[0], args.data());
    const char* msg = "exec failed\n";
    (void)!write(2, msg, strlen(msg));
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  if (in[0] >= 0) {
    close(in[0]);
    // Small (a credential): it fits the pipe, so writing cannot wait on the child.
    if (pid > 0) (void)!write(in[1], input.data(), input.size());
    close(in[1]);
  }
  if (pid < 0) {
    close(out[0]);
    close(err[0]);
    result.err = std::string("fork failed: ") + strerror(errno);
    return result;
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_fds = 2;
  bool timed_out = false;
  while (open_fds > 0) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    if (poll(fds, 2, static_cast<int>(left.count())) < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[65536];
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else if (sinks[i]->size() < kMaxOutput) {
        sinks[i]->append(buf, static_cast<size_t>(n));
      }
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) close(f.fd);
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = !timed_out && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

Result<int64_t> ParseSbatchAnswer(const std::string& out) {
  const std::string line = FirstLine(out);
  const std::string id = line.substr(0, line.find(';'));
  try {
    size_t used = 0;
    const int64_t job = std::stoll(id, &used);
    if (used == id.size() && job > 0) return job;
  } catch (const std::exception&) {
  }
  return Unavailable("sbatch answered \"" + line + "\", not a job id");
}

Result<std::string> ProcessSlurmCommands::SinfoJson() {
  auto r = RunProgram({"sinfo", "--json"}, timeout_);
  if (r.exit_code != 0) return Failed("sinfo --json", r);
  return r.out;
}

// Every user's jobs of the partition: on a pool whose jobs run as their
// owners, ours belong to many accounts (the resource manager knows them by
// job id).
Result<std::string> ProcessSlurmCommands::SqueueJson(const std::string& partition) {
  auto r = RunProgram({"squeue", "--json", "--partition=" + partition}, timeout_);
  if (r.exit_code != 0) return Failed("squeue --json", r);
  return r.out;
}

Result<std::string> ProcessSlurmCommands::SacctJson(const std::vector<int64_t>& job_ids) {
  std::string ids;
  for (int64_t id : job_ids) ids += (ids.empty() ? "" : ",") + std::to_string(id);
  auto r = RunProgram({"sacct", "--json", "--jobs=" + ids}, timeout_);
  if (r.exit_code != 0) return Failed("sacct --json", r);
  return r.out;
}

Result<int64_t> ProcessSlurmCommands::Sbatch(const SbatchJob& job) {
  std::error_code ec;
  std::filesystem::create_directories(job.folder, ec);
  std::filesystem::permissions(job.folder, std::filesystem::perms::owner_all,
                               std::filesystem::perm_options::replace, ec);
  if (ec) return Internal("cannot create " + job.folder + ": " + ec.message());
  // The credential: readable by the job's user only (docs/security.md).
  if (Status s = WritePrivateFile(job.folder + "/credential", job.credential + "\n", 0600); !s.ok()) return s;
  if (Status s = WritePrivateFile(job.folder + "/job.sh", job.script, 0700); !s.ok()) return s;
  std::vector<std::string> argv = {"sbatch", "--parsable", "--job-name=ring-" + job.allocation_id,
                                   "--output=" + job.folder + "/slurm-%j.out"};
  argv.insert(argv.end(), job.args.begin(), job.args.end());
  argv.push_back(job.folder + "/job.sh");
  auto r = RunProgram(argv, timeout_);
  if (r.exit_code != 0) return Failed("sbatch", r);
  return ParseSbatchAnswer(r.out);
}

Status ProcessSlurmCommands::Scancel(int64_t job_id, const std::string& signal) {
  std::vector<std::string> argv = {"scancel"};
  if (!signal.empty()) argv.insert(argv.end(), {"--signal=" + signal, "--full"});
  argv.push_back(std::to_string(job_id));
  auto r = RunProgram(argv, timeout_);
  if (r.exit_code != 0) return Failed("scancel", r);
  return Status::Ok();
}

std::vector<std::string> HelperSlurmCommands::Command(const std::string& verb) const {
  std::vector<std::string> argv = {helper_};
  if (!config_.empty()) argv.insert(argv.end(), {"--config", config_});
  argv.push_back(verb);
  return argv;
}

// The helper writes the folder, the credential and the script itself (as
// the owner) from its own settings; the master hands it the allocation,
// whose account, the options and the credential (on stdin).
Result<int64_t> HelperSlurmCommands::Sbatch(const SbatchJob& job) {
  if (!job.run_as)
    return Status(ErrorCode::kPermissionDenied,
                  "the allocation's owner has no linked Unix account, and this pool runs every job as "
                  "its owner's account");
  std::vector<std::string> argv = Command("submit");
  argv.insert(argv.end(), {"--allocation", job.allocation_id, "--uid", std::to_string(job.run_as->uid),
                           "--gid", std::to_string(job.run_as->gid)});
  if (!job.container_runtime.empty()) argv.insert(argv.end(), {"--container-runtime", job.container_runtime});
  argv.push_back("--");
  argv.insert(argv.end(), job.args.begin(), job.args.end());
  auto r = RunProgram(argv, timeout_, job.credential + "\n");
  if (r.exit_code != 0) return Failed("the submit helper", r);
  return ParseSbatchAnswer(r.out);
}

Status HelperSlurmCommands::Scancel(int64_t job_id, const std::string& signal) {
  std::vector<std::string> argv = Command("cancel");
  argv.insert(argv.end(), {"--job", std::to_string(job_id)});
  if (!signal.empty()) argv.insert(argv.end(), {"--signal", signal});
  auto r = RunProgram(argv, timeout_);
  if (r.exit_code != 0) return Failed("the submit helper's cancel", r);
  return Status::Ok();
}

}  // namespace ring
