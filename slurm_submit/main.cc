// ring-slurm-submit: submits and cancels a Ringmaster allocation's Slurm
// job as the allocation's owner (docs/slurm.md "Whose account runs the
// jobs"). Installed root-owned and setuid root on the master's machine; only
// root and the master's account (master_user) may call it.
//
//   ring-slurm-submit [--config FILE] submit --allocation ID --uid U --gid G [--container-runtime R]
//                     -- SBATCH-OPTIONS...
//     (the allocation's credential on stdin; prints the job id)
//   ring-slurm-submit [--config FILE] cancel --job ID [--signal SIGNAL]
//
// Before it submits, the helper asks the master (its own master_url) what
// the allocation's credential grants: the owner's uid and gid and the job's
// nodes must be those of the request. It then makes the job's folder for
// the owner, writes the credential and the batch script itself (from its
// own settings: the agent binary, the master's address), and runs sbatch as
// the owner with a clean environment. It cancels only jobs named
// ring-<allocation> that run in that allocation's folder as an account at
// or above min_uid, as that account.
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/http_client.h"
#include "master/rm/slurmrm/slurm_job_script.h"
#include "master/rm/slurmrm/slurm_state.h"
#include "slurm_submit/submit_config.h"
#include "slurm_submit/submit_rules.h"

namespace ring::submit {
namespace {

struct Output {
  int exit_code = -1;
  std::string out, err;
};

// The account a child runs as.
struct Account {
  uid_t uid = 0;
  gid_t gid = 0;
  std::string name;  // for supplementary groups; empty: none
  std::string home = "/";
};

// Runs `argv` as `who` in `cwd` with exactly `env`, stdin from /dev/null,
// killed after 20 s (the master waits 30 s for the helper).
Output RunAs(const Account& who, const std::vector<std::string>& argv, const std::vector<std::string>& env,
             const std::string& cwd) {
  Output r;
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) return r;
  const pid_t pid = fork();
  if (pid == 0) {
    const int null = open("/dev/null", O_RDONLY);
    dup2(null, 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    const bool groups =
        who.name.empty() ? setgroups(0, nullptr) == 0 : initgroups(who.name.c_str(), who.gid) == 0;
    if (!groups || setgid(who.gid) != 0 || setuid(who.uid) != 0 || getuid() != who.uid ||
        geteuid() != who.uid || (who.uid != 0 && setuid(0) == 0) || chdir(cwd.c_str()) != 0) {
      std::fprintf(stderr, "cannot become uid %u in %s: %s\n", who.uid, cwd.c_str(), std::strerror(errno));
      _exit(126);
    }
    std::vector<char*> args, envp;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
    args.push_back(nullptr);
    envp.push_back(nullptr);
    execve(args[0], args.data(), envp.data());
    std::fprintf(stderr, "cannot run %s: %s\n", args[0], std::strerror(errno));
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  if (pid < 0) return r;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  std::string* sinks[2] = {&r.out, &r.err};
  for (int open_fds = 2; open_fds > 0;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now())
            .count();
    if (left <= 0) {
      kill(pid, SIGKILL);
      break;
    }
    if (poll(fds, 2, static_cast<int>(left)) < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[16384];
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else if (sinks[i]->size() < (1 << 24)) {
        sinks[i]->append(buf, static_cast<size_t>(n));
      }
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) close(f.fd);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (r.exit_code == -1 && r.err.empty()) r.err = argv[0] + " did not finish within 20 s";
  return r;
}

std::optional<Account> AccountOf(uid_t uid, std::optional<gid_t> gid) {
  passwd* pw = getpwuid(uid);
  if (!pw) return std::nullopt;
  return Account{uid, gid.value_or(pw->pw_gid), pw->pw_name, pw->pw_dir ? pw->pw_dir : "/"};
}

// What Slurm's commands get: nothing of the caller's environment.
std::vector<std::string> SlurmEnvironment(const SubmitConfig& config, const Account& who) {
  std::vector<std::string> env = {"PATH=/usr/bin:/bin", "HOME=" + who.home, "USER=" + who.name,
                                  "LOGNAME=" + who.name};
  if (!config.slurm_conf.empty()) env.push_back("SLURM_CONF=" + config.slurm_conf);
  return env;
}

Status Refused(const Output& r, const std::string& what) {
  std::string text = r.err.empty() ? r.out : r.err;
  if (text.size() > 300) text.resize(300);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return Unavailable(what + " exited " + std::to_string(r.exit_code) + ": " + text);
}

// Only root and the master's account call the helper.
Status CheckCaller(const SubmitConfig& config) {
  const uid_t caller = getuid();
  if (caller == 0) return Status::Ok();
  passwd* master = getpwnam(config.master_user.c_str());
  if (master && master->pw_uid == caller) return Status::Ok();
  return Status(ErrorCode::kPermissionDenied,
                "uid " + std::to_string(caller) +
                    " may not call the submit helper: only root and master_user " + config.master_user +
                    " may");
}

Result<Grant> AskMaster(const SubmitConfig& config, const std::string& allocation,
                        const std::string& credential) {
  auto url = Url::Parse(config.master_url);
  if (!url.ok()) return url.status();
  HttpClient http(*url, std::chrono::seconds(5));
  http.SetCaFile(config.ca_file);
  http.SetBearerToken(credential);
  auto answer = http.Request("GET", "/api/v1/slurm/grants/" + allocation);
  if (!answer.ok())
    return Unavailable("cannot ask the master at " + config.master_url + ": " + answer.status().message());
  if (answer->status != 200)
    return Status(ErrorCode::kPermissionDenied, "the master does not know allocation " + allocation +
                                                    " with this credential (HTTP " +
                                                    std::to_string(answer->status) + ")");
  return ParseGrant(answer->body);
}

// Writes `text` as a new file `name` of the folder `dir` (no link followed).
Status WriteNew(int dir, const std::string& name, const std::string& text, mode_t mode,
                const Account& owner) {
  const int fd = openat(dir, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) return Internal("cannot create " + name + ": " + std::strerror(errno));
  const bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
                  fchown(fd, owner.uid, owner.gid) == 0 && fchmod(fd, mode) == 0;
  close(fd);
  return ok ? Status::Ok() : Internal("cannot write " + name + ": " + std::strerror(errno));
}

Result<std::string> MakeJobFolder(const SubmitConfig& config, const std::string& allocation,
                                  const std::string& credential, const std::string& runtime,
                                  const Account& owner) {
  const std::string folder = config.job_dir + "/" + allocation;
  if (mkdir(folder.c_str(), 0700) != 0)
    return errno == EEXIST ? Conflict(folder + " exists: an allocation's job is submitted once")
                           : Internal("cannot make " + folder + ": " + std::strerror(errno));
  const int dir = open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir < 0) return Internal("cannot open " + folder + ": " + std::strerror(errno));
  const std::string script = BatchScript({config.agent_binary, config.agent_master_url, allocation,
                                          folder + "/credential", config.agent_ca_file, runtime});
  Status s = WriteNew(dir, "credential", credential + "\n", 0600, owner);
  if (s.ok()) s = WriteNew(dir, "job.sh", script, 0700, owner);
  if (s.ok() && fchown(dir, owner.uid, owner.gid) != 0)
    s = Internal("cannot give " + folder + " to its owner");
  close(dir);
  if (!s.ok()) return s;
  return folder;
}

Result<int64_t> Submit(const SubmitConfig& config, const std::string& allocation, int64_t uid, int64_t gid,
                       const std::string& runtime, const std::vector<std::string>& options) {
  if (Status s = CheckAllocationId(allocation); !s.ok()) return s;
  if (Status s = CheckContainerRuntime(runtime); !s.ok()) return s;
  if (Status s = CheckSbatchOptions(options); !s.ok()) return s;
  if (Status s = CheckAccount(uid, config.min_uid); !s.ok()) return s;
  if (gid <= 0) return Status(ErrorCode::kPermissionDenied, "jobs never run with gid " + std::to_string(gid));
  auto owner = AccountOf(static_cast<uid_t>(uid), static_cast<gid_t>(gid));
  if (!owner) return NotFound("uid " + std::to_string(uid) + " is no account of this machine");
  std::string credential;
  if (!std::getline(std::cin, credential) || credential.empty() || credential.size() > 512)
    return InvalidArgument("the allocation's credential is read from stdin, one line");
  auto grant = AskMaster(config, allocation, credential);
  if (!grant.ok()) return grant.status();
  if (Status s = CheckGrant(*grant, uid, gid, NodelistOf(options)); !s.ok()) return s;
  auto folder = MakeJobFolder(config, allocation, credential, runtime, *owner);
  if (!folder.ok()) return folder.status();
  std::vector<std::string> argv = {config.slurm_bin_dir + "/sbatch", "--parsable",
                                   "--job-name=ring-" + allocation, "--output=" + *folder + "/slurm-%j.out"};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.push_back(*folder + "/job.sh");
  const Output r = RunAs(*owner, argv, SlurmEnvironment(config, *owner), *folder);
  if (r.exit_code != 0) return Refused(r, "sbatch as " + owner->name);
  const std::string line = r.out.substr(0, r.out.find_first_of(";\n"));
  try {
    size_t used = 0;
    const int64_t job = std::stoll(line, &used);
    if (used == line.size() && job > 0) return job;
  } catch (const std::exception&) {
  }
  return Unavailable("sbatch answered \"" + line + "\", not a job id");
}

Status Cancel(const SubmitConfig& config, const std::string& job_text, const std::string& signal) {
  int64_t job_id = 0;
  for (char c : job_text)
    job_id = (c >= '0' && c <= '9' && job_id < (int64_t{1} << 40)) ? job_id * 10 + (c - '0') : -1;
  if (job_text.empty() || job_id <= 0)
    return InvalidArgument("--job must be a Slurm job id, got \"" + job_text + "\"");
  if (!signal.empty())
    if (Status s = CheckSignal(signal); !s.ok()) return s;
  auto caller = AccountOf(getuid(), getgid());
  if (!caller) return Internal("the caller's account is unknown");
  const Output q =
      RunAs(*caller, {config.slurm_bin_dir + "/squeue", "--json", "--jobs=" + std::to_string(job_id)},
            SlurmEnvironment(config, *caller), "/");
  auto jobs = q.exit_code == 0 ? ParseSqueueJson(q.out) : Result<std::vector<SlurmJob>>(Refused(q, "squeue"));
  if (!jobs.ok()) {
    // squeue refuses an id it no longer knows: the job is gone already.
    if (q.err.find("Invalid job id") != std::string::npos) return Status::Ok();
    return jobs.status();
  }
  const SlurmJob* job = nullptr;
  for (const auto& j : *jobs)
    if (j.id == job_id) job = &j;
  if (!job || SlurmJobEnded(job->state)) return Status::Ok();
  // Ours: named ring-<allocation> and run in the folder the helper made
  // for that allocation (only root makes folders in job_dir).
  const std::string allocation = job->name.rfind("ring-", 0) == 0 ? job->name.substr(5) : "";
  if (!CheckAllocationId(allocation).ok() || job->work_dir != config.job_dir + "/" + allocation)
    return Status(ErrorCode::kPermissionDenied, "job " + std::to_string(job_id) + " (" + job->name + " in " +
                                                    job->work_dir + ") is not a Ringmaster allocation's job");
  if (Status s = CheckAccount(job->user_id, config.min_uid); !s.ok()) return s;
  auto owner = AccountOf(static_cast<uid_t>(job->user_id), std::nullopt);
  if (!owner)
    return NotFound("the job's uid " + std::to_string(job->user_id) + " is no account of this machine");
  std::vector<std::string> argv = {config.slurm_bin_dir + "/scancel"};
  if (!signal.empty()) argv.insert(argv.end(), {"--signal=" + signal, "--full"});
  argv.push_back(std::to_string(job_id));
  const Output r = RunAs(*owner, argv, SlurmEnvironment(config, *owner), "/");
  if (r.exit_code != 0) return Refused(r, "scancel as " + owner->name);
  return Status::Ok();
}

int Fail(const Status& s) {
  std::fprintf(stderr, "ring-slurm-submit: %s\n", s.message().c_str());
  return s.code() == ErrorCode::kInvalidArgument ? 2 : 1;
}

int Main(int argc, char** argv) {
  clearenv();  // nothing of the caller's environment reaches anything below
  umask(077);
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string config_path = kDefaultConfigPath;
  size_t i = 0;
  if (args.size() >= 2 && args[0] == "--config") {
    config_path = args[1];
    i = 2;
  }
  if (i >= args.size() || (args[i] != "submit" && args[i] != "cancel"))
    return Fail(
        InvalidArgument("usage: ring-slurm-submit [--config FILE] submit --allocation ID --uid U --gid G -- "
                        "SBATCH-OPTIONS... | "
                        "cancel --job ID [--signal SIGNAL]"));
  const std::string verb = args[i++];
  std::map<std::string, std::string> flags;
  std::vector<std::string> options;
  for (; i < args.size(); ++i) {
    if (args[i] == "--") {
      options.assign(args.begin() + static_cast<long>(i) + 1, args.end());
      break;
    }
    if (args[i].rfind("--", 0) != 0 || i + 1 >= args.size())
      return Fail(InvalidArgument("unexpected " + args[i]));
    flags[args[i].substr(2)] = args[i + 1];
    ++i;
  }
  auto config = LoadSubmitConfig(config_path);
  if (!config.ok()) return Fail(config.status());
  if (Status s = CheckCaller(*config); !s.ok()) return Fail(s);
  if (verb == "cancel") {
    for (const auto& [k, v] : flags)
      if (k != "job" && k != "signal")
        return Fail(InvalidArgument("cancel takes --job and --signal, not --" + k));
    if (Status s = Cancel(*config, flags["job"], flags["signal"]); !s.ok()) return Fail(s);
    return 0;
  }
  for (const auto& [k, v] : flags)
    if (k != "allocation" && k != "uid" && k != "gid" && k != "container-runtime")
      return Fail(
          InvalidArgument("submit takes --allocation, --uid, --gid and --container-runtime, not --" + k));
  int64_t ids[2] = {-1, -1};
  for (int k = 0; k < 2; ++k) {
    const std::string& text = flags[k == 0 ? "uid" : "gid"];
    try {
      size_t used = 0;
      ids[k] = std::stoll(text, &used);
      if (used != text.size()) ids[k] = -1;
    } catch (const std::exception&) {
    }
    if (ids[k] < 0)
      return Fail(InvalidArgument(std::string("--") + (k == 0 ? "uid" : "gid") + " must be a number"));
  }
  auto job = Submit(*config, flags["allocation"], ids[0], ids[1], flags["container-runtime"], options);
  if (!job.ok()) return Fail(job.status());
  std::printf("%lld\n", static_cast<long long>(*job));
  return 0;
}

}  // namespace
}  // namespace ring::submit

int main(int argc, char** argv) {
  return ring::submit::Main(argc, argv);
}
