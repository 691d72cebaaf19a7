// ringagent: parses flags into AgentConfig and runs the Agent.
#include <sys/prctl.h>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "agent/agent.h"
#include "agent/agent_config.h"
#include "agent/agent_config_file.h"
#include "agent/run_as.h"
#include "common/log_format.h"

int main(int argc, char** argv) {
  // Not dumpable: processes of the same account (trials in single-user mode)
  // can neither read /proc/<agent>/environ or /mem nor ptrace the agent.
  ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  ring::AgentConfig config;
  std::string log_format = "text";
  // The settings file first, so that flags override it.
  std::string config_file = ring::ConfigFileArgument(argc, argv);
  if (!config_file.empty()) {
    if (auto status = ring::LoadAgentConfigFile(config_file, config, log_format); !status.ok()) {
      std::fprintf(stderr, "ringagent: %s\n", status.message().c_str());
      return 2;
    }
  }
  CLI::App app{"ringagent: runs Ringmaster trials on this host"};
  int64_t grace_ms = config.shutdown_grace.count();
  bool no_gpus = !config.detect_gpus;
  app.add_option("--config", config_file,
                 "agent.yaml with settings (flags override it; see configs/agent.yaml)");
  app.add_option("--master", config.master_url,
                 "Base URL of the master, e.g. http://10.0.0.1:8080 (https:// when it serves TLS); required, "
                 "here or in --config");
  app.add_option("--id", config.id, "Agent name (default: the host name)");
  app.add_option("--pool", config.pool, "Resource pool of this agent's slots")->capture_default_str();
  app.add_option("--cpu-slots", config.cpu_slots, "CPU slots to offer (0: one per CPU when no GPU is found)")
      ->capture_default_str();
  app.add_flag("--no-gpus", no_gpus, "Do not look for GPUs");
  app.add_option("--work-dir", config.work_dir,
                 "Trial work directories (default: /var/lib/ringagent/work as root, else "
                 "~/.local/state/ringagent/work); must be the agent's own and not writable by others");
  app.add_flag("--single-user", config.single_user,
               "Run every task as the agent's own Unix user instead of as its owner (for a laptop)");
  app.add_option("--unlinked-user", config.unlinked_user,
                 "Unprivileged account that tasks of users with no linked Unix account run as")
      ->capture_default_str();
  app.add_option("--containment", config.containment,
                 "How a task's processes are kept together: auto, cgroup2, freezer or process_group")
      ->capture_default_str();
  app.add_option("--container-runtimes", config.container_runtimes,
                 "Container runtimes for trials with an image: auto (each of podman, docker, apptainer, "
                 "singularity that runs here), none, or a list like podman,docker")
      ->capture_default_str();
  app.add_option("--python-dir", config.python_dir,
                 "The trial runtime's Python folder (ringtrial, determined), put first on every trial's "
                 "PYTHONPATH (default: found beside this binary: <bin>/../python or "
                 "<prefix>/lib/python3.X/dist-packages; \"none\": leave PYTHONPATH alone)");
  std::string token_on_command_line;
  app.add_option("--token", token_on_command_line,
                 "Refused: a token on the command line shows in ps; use --token-file");
  app.add_option("--token-file", config.token_file,
                 "File holding the cluster token (the master's <data-dir>/cluster-token), readable by this "
                 "user only; needed to enrol, i.e. until the state folder holds a credential")
      ->envname("RING_AGENT_TOKEN_FILE");
  app.add_option("--state-dir", config.state_dir,
                 "This agent's own folder (0700) keeping the credential the master issued its id "
                 "(default: /var/lib/ringagent/<id> as root, else ~/.local/state/ringagent/<id>)");
  app.add_option("--ca-file", config.ca_file,
                 "CA certificate(s) (PEM) to trust for an https:// master besides the system's; trials get "
                 "it as RING_CA_FILE")
      ->envname("RING_CA_FILE");
  app.add_option("--slurm-allocation", config.slurm_allocation,
                 "One-allocation mode (started by srun in a Slurm job's batch script): run this "
                 "allocation's ranks of this node, then exit");
  app.add_option("--credential-file", config.credential_file,
                 "With --slurm-allocation: the file (0600) holding the allocation's credential");
  app.add_option("--credential-env", config.credential_env,
                 "With --slurm-allocation: the environment variable holding the allocation's credential "
                 "(a job submitted through slurmrestd); removed from the environment once read");
  int64_t job_start_timeout_ms = config.job_start_timeout.count();
  app.add_option("--job-start-timeout-ms", job_start_timeout_ms,
                 "With --slurm-allocation: leave when no start came this long after starting")
      ->capture_default_str();
  app.add_option("--address", config.address,
                 "Address other ranks reach this host at (default: the address the master sees)");
  app.add_option("--log-level", config.log_level, "trace, debug, info, warn or error")->capture_default_str();
  app.add_option("--shutdown-grace-ms", grace_ms, "On SIGTERM, time trials get before SIGKILL")
      ->capture_default_str();
  app.add_option("--log-format", log_format, "text, or json: one JSON object per line")
      ->capture_default_str()
      ->check(CLI::IsMember({"text", "json"}));
  CLI11_PARSE(app, argc, argv);
  if (!token_on_command_line.empty()) {
    std::fprintf(stderr,
                 "ringagent: --token is refused: every user on this host sees the command line (ps). Put the "
                 "cluster token in a file only this user can read (chmod 600) and pass --token-file FILE\n");
    return 2;
  }
  // Not read any more: the environment is visible to the agent's children
  // and in /proc. Refused rather than ignored, so it is not left behind.
  if (std::getenv("RING_AGENT_TOKEN") != nullptr) {
    std::fprintf(stderr,
                 "ringagent: RING_AGENT_TOKEN is no longer read (the environment reaches trials and "
                 "/proc); unset it and pass --token-file FILE (a file only this user can read)\n");
    return 2;
  }
  if (config.master_url.empty()) {
    std::fprintf(stderr, "ringagent: --master is required (or master: in --config)\n");
    return 2;
  }
  if (log_format != "text" && log_format != "json") {
    std::fprintf(stderr, "ringagent: log_format must be text or json, got \"%s\"\n", log_format.c_str());
    return 2;
  }
  config.detect_gpus = !no_gpus;
  config.shutdown_grace = std::chrono::milliseconds(grace_ms);
  config.job_start_timeout = std::chrono::milliseconds(job_start_timeout_ms);

  if (auto status = ring::UseLogFormat("ringagent", log_format); !status.ok()) {
    std::fprintf(stderr, "ringagent: %s\n", status.message().c_str());
    return 2;
  }
  if (log_format == "text") spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  if (auto status = ring::ResolveAgentConfig(config); !status.ok()) {
    spdlog::error("[agent] {}", status.message());
    return 2;
  }
  spdlog::set_level(spdlog::level::from_str(config.log_level));
  std::string run_as_notice;
  auto run_as = ring::ResolveRunAsPolicy(config, run_as_notice);
  if (!run_as.ok()) {
    spdlog::error("[agent] {}", run_as.status().message());
    return 2;
  }
  // A job agent leaves nothing behind on the node: its work folder (the
  // ranks' folders, the model) goes with it.
  const std::string made_folder = config.job_work_dir_made ? config.work_dir : "";
  ring::Agent agent(std::move(config), std::move(*run_as), std::move(run_as_notice));
  const int code = agent.Run();
  if (!made_folder.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(made_folder, ec);
  }
  return code;
}
