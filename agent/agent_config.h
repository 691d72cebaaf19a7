#pragma once
// The agent's whole configuration: one typed struct, filled by main.cc from
// the command line, completed and checked by ResolveAgentConfig before the
// Agent starts. Immutable afterwards; read from any thread.
#include <chrono>
#include <cstddef>
#include <string>

#include "common/status.h"

namespace ring {

struct AgentConfig {
  std::string master_url;          // --master: base URL of the master, "http[s]://host:port"
  std::string id;                  // --id: agent name shown by the master; defaults to the host name
  std::string pool = "default";    // --pool: resource pool this agent's slots belong to
  int cpu_slots = 0;               // --cpu-slots: CPU slots to offer; 0 = number of CPUs when no GPU is found
  bool detect_gpus = true;         // --no-gpus turns NVML detection off
  std::string work_dir;            // --work-dir: trial work directories; default /var/lib/ringagent/work
                                   //   as root, else ~/.local/state/ringagent/work (never under /tmp)
  std::string token;               // the cluster token, read from token_file (never from flags or the
                                   //   environment); only used to enrol
  std::string token_file;          // --token-file: the master's cluster-token file, 0600 (0400) for this
                                   //   user; needed until the agent is enrolled
  std::string state_dir;           // --state-dir: the agent's own folder (0700) keeping the credential of
                                   //   its id; default /var/lib/ringagent/<id> as root, else
                                   //   ${XDG_STATE_HOME:-~/.local/state}/ringagent/<id>
  std::string ca_file;             // --ca-file / RING_CA_FILE: CA (PEM) trusted for an https master besides
                                   //   the system's; made absolute, and handed to trials as RING_CA_FILE
  std::string address;             // --address: host other ranks reach this agent at; default: the
                                   //   local address of the connection to the master
  std::string log_level = "info";  // --log-level: trace, debug, info, warn, error
  std::chrono::milliseconds shutdown_grace{10000};     // SIGTERM to trials on shutdown, SIGKILL after this
  std::chrono::milliseconds download_timeout{120000};  // model definition download timeout
  size_t max_queued_log_bytes = 32u << 20;  // log batches kept while disconnected (oldest dropped first)
  std::string nvml_library = "libnvidia-ml.so.1";  // loaded with dlopen to find GPUs
  bool single_user = false;                        // --single-user: run every task as the agent itself
  std::string unlinked_user = "nobody";     // --unlinked-user: account for tasks of owners with no linked one
  bool allow_root_trials = false;           // a task whose owner is linked to uid 0 may run as root
  std::string containment = "auto";         // --containment: auto, cgroup2, freezer or process_group
  std::string container_runtimes = "auto";  // --container-runtimes: auto (podman, docker, apptainer,
                                            //   singularity, each that runs), none, or a list "podman,docker"
  // --slurm-allocation: one-allocation mode, started by srun inside a Slurm
  // job's batch script: the agent connects as slurm.<job>.<node> with the
  // allocation's credential (--credential-file) instead of enrolling, runs
  // that node's ranks of this allocation only, and exits once they have.
  std::string slurm_allocation;
  std::string credential_file;  // --credential-file: the allocation's credential, 0600 (0400) for this user
  std::string credential_env;   // --credential-env: or the variable holding it (unset once read)
  std::string job_credential;   // read from credential_file or credential_env
  bool job_work_dir_made = false;  // work_dir was made for this job agent: it goes when the agent does
  // --slurm-allocation: the agent leaves when no start came this long after
  // it started (the allocation ended, or the master cannot be reached), so
  // that an orphaned job does not hold its nodes until its time limit.
  std::chrono::milliseconds job_start_timeout{600000};
  std::string python_dir;  // --python-dir: the runtime's Python folder (ringtrial, determined), put first on
                           //   trials' PYTHONPATH; default found relative to the agent's binary; "none": off
};

// Fills the defaults that depend on the host (id, work_dir, state_dir) and
// checks every field; an error names the offending flag. Reads the token
// file (refusing one that group or others may read); touches no folder.
Status ResolveAgentConfig(AgentConfig& config);

// The work folder when --work-dir is not given: /var/lib/ringagent/work for
// root, else under the user's state folder (XDG_STATE_HOME or ~/.local/state).
std::string DefaultWorkDir();

// The agent's version string, sent in hello.
const char* AgentVersion();

}  // namespace ring
