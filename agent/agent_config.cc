#include "agent/agent_config.h"

#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <sstream>
#include "agent/agent_state.h"

#include "agent/container_runtime.h"
#include "agent/process_containment.h"
#include "agent/runtime_python_dir.h"
#include "common/http_client.h"

#ifndef RING_VERSION
#define RING_VERSION "0.0.0"
#endif

namespace ring {

const char* AgentVersion() {
  return RING_VERSION;
}

std::string DefaultWorkDir() {
  // Never under /tmp, where any user may have made the folder first.
  if (::geteuid() == 0) return "/var/lib/ringagent/work";
  const char* state = std::getenv("XDG_STATE_HOME");
  if (state && state[0] == '/') return std::string(state) + "/ringagent/work";
  const char* home = std::getenv("HOME");
  return std::string(home && home[0] == '/' ? home : "/var/lib") + "/.local/state/ringagent/work";
}

namespace {

// One-allocation mode: who it is comes from Slurm's environment of the task.
Status ResolveJobAgent(AgentConfig& config) {
  if (config.credential_file.empty() == config.credential_env.empty())
    return InvalidArgument(
        "--slurm-allocation needs the allocation's credential: --credential-file or --credential-env");
  if (!config.credential_env.empty()) {
    // Taken out of the environment, so that nothing this agent starts sees it.
    const char* value = std::getenv(config.credential_env.c_str());
    if (!value || !*value)
      return InvalidArgument("--credential-env: " + config.credential_env + " is not set");
    config.job_credential = value;
    ::unsetenv(config.credential_env.c_str());
  } else {
    auto credential = ReadTokenFile(config.credential_file);
    if (!credential.ok()) return InvalidArgument("--credential-file: " + credential.status().message());
    config.job_credential = *credential;
  }
  const char* job = std::getenv("SLURM_JOB_ID");
  const char* node = std::getenv("SLURMD_NODENAME");
  if (!job || !*job || !node || !*node)
    return InvalidArgument(
        "--slurm-allocation runs inside a Slurm job step (SLURM_JOB_ID and SLURMD_NODENAME unset)");
  config.id = "slurm." + std::string(job) + "." + node;
  // Slurm runs the job as its user and contains it: tasks run as that user.
  config.single_user = true;
  if (config.containment == "auto") config.containment = "process_group";
  // A folder of its own for this run (0700, made now): job ids start again
  // on a new Slurm cluster, and the folder of an earlier job of that id,
  // another account's, must not be taken over.
  if (config.work_dir.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    std::string folder =
        std::string(tmp && *tmp == '/' ? tmp : "/tmp") + "/ringagent-" + job + "-" + node + "-XXXXXX";
    if (!::mkdtemp(folder.data()))
      return Internal("cannot make a work folder " + folder + ": " + std::strerror(errno));
    config.work_dir = folder;
    config.job_work_dir_made = true;
  }
  if (config.state_dir.empty()) config.state_dir = config.work_dir + "/.state";  // holds nothing
  return Status::Ok();
}

}  // namespace

Status ResolveAgentConfig(AgentConfig& config) {
  if (!config.slurm_allocation.empty())
    if (Status s = ResolveJobAgent(config); !s.ok()) return s;
  if (config.master_url.empty()) return InvalidArgument("--master is required (e.g. http://127.0.0.1:8080)");
  std::string url = config.master_url;
  if (url.rfind("ws://", 0) == 0) url = "http://" + url.substr(5);
  if (url.rfind("wss://", 0) == 0) url = "https://" + url.substr(6);
  auto parsed = Url::Parse(url);
  if (!parsed.ok()) return InvalidArgument("--master: " + parsed.status().message());
  config.master_url = parsed->ToString();

  if (config.id.empty()) {
    char host[HOST_NAME_MAX + 1] = {};
    if (gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0')
      return InvalidArgument("--id is required: the host name is unavailable");
    config.id = host;
  }
  for (char c : config.id) {
    bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
    if (!ok)
      return InvalidArgument("--id \"" + config.id + "\" may only contain letters, digits, '-', '_' and '.'");
  }
  if (config.pool.empty()) return InvalidArgument("--pool must not be empty");
  if (!config.token_file.empty()) {
    auto token = ReadTokenFile(config.token_file);
    if (!token.ok()) return token.status();
    config.token = *token;
  }
  if (config.state_dir.empty()) {
    if (::geteuid() == 0) {
      config.state_dir = "/var/lib/ringagent/" + config.id;
    } else {
      const char* xdg = std::getenv("XDG_STATE_HOME");
      const char* home = std::getenv("HOME");
      if (xdg && *xdg == '/')
        config.state_dir = std::string(xdg) + "/ringagent/" + config.id;
      else if (home && *home == '/')
        config.state_dir = std::string(home) + "/.local/state/ringagent/" + config.id;
      else
        return InvalidArgument("--state-dir is required: neither XDG_STATE_HOME nor HOME is set");
    }
  }
  {
    std::error_code ec;
    auto absolute = std::filesystem::absolute(config.state_dir, ec);
    if (ec) return InvalidArgument("--state-dir " + config.state_dir + ": " + ec.message());
    config.state_dir = absolute.lexically_normal().string();
    while (config.state_dir.size() > 1 && config.state_dir.back() == '/') config.state_dir.pop_back();
  }

  if (!config.ca_file.empty()) {
    // Absolute, since trials get it as RING_CA_FILE and run in their own directories.
    std::error_code ec;
    auto absolute = std::filesystem::absolute(config.ca_file, ec);
    if (!ec) config.ca_file = absolute.lexically_normal().string();
    if (Status s = CheckCaFile(config.ca_file); !s.ok()) return InvalidArgument("--ca-file: " + s.message());
  }
  if (config.cpu_slots < 0) return InvalidArgument("--cpu-slots must be 0 or more");
  if (config.work_dir.empty()) config.work_dir = DefaultWorkDir();
  // Absolute, so trial working directories and log lines do not depend on where the agent started.
  std::error_code ec;
  auto absolute = std::filesystem::absolute(config.work_dir, ec);
  if (ec) return InvalidArgument("--work-dir " + config.work_dir + ": " + ec.message());
  config.work_dir = absolute.lexically_normal().string();
  while (config.work_dir.size() > 1 && config.work_dir.back() == '/') config.work_dir.pop_back();
  static const char* kLevels[] = {"trace", "debug", "info", "warn", "error", "critical", "off"};
  bool level_ok = false;
  for (const char* l : kLevels) level_ok = level_ok || config.log_level == l;
  if (!level_ok) return InvalidArgument("--log-level must be one of trace, debug, info, warn, error");
  bool is_auto = false;
  ContainmentKind kind{};
  if (config.container_runtimes != "auto" && config.container_runtimes != "none") {
    std::stringstream names(config.container_runtimes);
    std::string name;
    while (std::getline(names, name, ','))
      if (!ParseRuntimeKind(name))
        return InvalidArgument(
            "--container-runtimes must be auto, none or a list of podman, docker, apptainer, "
            "singularity, got \"" +
            config.container_runtimes + "\"");
  }
  if (!ParseContainment(config.containment, is_auto, kind))
    return InvalidArgument("--containment must be auto, cgroup2, freezer or process_group, got \"" +
                           config.containment + "\"");
  if (config.shutdown_grace.count() < 0) return InvalidArgument("--shutdown-grace-ms must be 0 or more");
  if (config.python_dir == "none") {
    config.python_dir.clear();
  } else if (config.python_dir.empty()) {
    std::error_code exe_ec;
    const auto exe = std::filesystem::read_symlink("/proc/self/exe", exe_ec);
    if (!exe_ec) config.python_dir = FindRuntimePythonDir(exe);  // "" when not found: the agent warns
  } else {
    auto dir = std::filesystem::absolute(config.python_dir, ec);
    if (ec || !IsRuntimePythonDir(dir))
      return InvalidArgument(
          "--python-dir " + config.python_dir +
          " holds no determined/__init__.py (the trial runtime's Python folder: build/python, or "
          "<prefix>/lib/python3.X/dist-packages after cmake --install)");
    config.python_dir = dir.lexically_normal().string();
  }
  return Status::Ok();
}

}  // namespace ring
