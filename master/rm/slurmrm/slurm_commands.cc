#include "master/rm/slurmrm/slurm_commands.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

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

}  // namespace

CommandOutput RunProgram(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  CommandOutput result;
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0) return result;
  if (pipe2(err, O_CLOEXEC) != 0) {
    close(out[0]);
    close(out[1]);
    return result;
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    const int null = open("/dev/null", O_RDONLY);
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

Result<std::string> ProcessSlurmCommands::SinfoJson() {
  auto r = RunProgram({"sinfo", "--json"}, timeout_);
  if (r.exit_code != 0) return Failed("sinfo --json", r);
  return r.out;
}

Result<std::string> ProcessSlurmCommands::SqueueJson() {
  auto r = RunProgram({"squeue", "--json", "--me"}, timeout_);
  if (r.exit_code != 0) return Failed("squeue --json", r);
  return r.out;
}

Result<int64_t> ProcessSlurmCommands::Sbatch(const std::vector<std::string>& args,
                                             const std::string& script) {
  std::vector<std::string> argv = {"sbatch", "--parsable"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back(script);
  auto r = RunProgram(argv, timeout_);
  if (r.exit_code != 0) return Failed("sbatch", r);
  // "JOBID" or "JOBID;CLUSTER".
  const std::string id = FirstLine(r.out).substr(0, r.out.find(';'));
  try {
    size_t used = 0;
    const int64_t job = std::stoll(id, &used);
    if (used == id.size() && job > 0) return job;
  } catch (const std::exception&) {
  }
  return Unavailable("sbatch answered \"" + FirstLine(r.out) + "\", not a job id");
}

Status ProcessSlurmCommands::Scancel(int64_t job_id, const std::string& signal) {
  std::vector<std::string> argv = {"scancel"};
  if (!signal.empty()) argv.insert(argv.end(), {"--signal=" + signal, "--full"});
  argv.push_back(std::to_string(job_id));
  auto r = RunProgram(argv, timeout_);
  if (r.exit_code != 0) return Failed("scancel", r);
  return Status::Ok();
}

}  // namespace ring
