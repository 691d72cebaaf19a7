#pragma once
// master.yaml resource_pools[].resource_manager when its type is slurm: the
// pool's slots are a Slurm partition's nodes, and each allocation becomes one
// Slurm job (docs/slurm.md).
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace ring {

enum class SlurmSlotType { kCpu, kCuda };
// "cpu" or "cuda", as slots and start messages name the type.
inline const char* SlotTypeName(SlurmSlotType type) {
  return type == SlurmSlotType::kCuda ? "cuda" : "cpu";
}

// slurmrestd instead of Slurm's commands (docs/slurm.md "Through
// slurmrestd"): each job is submitted and cancelled with a token for its
// owner's linked account, signed with the site's JWT key.
struct SlurmRestOptions {
  std::string url;  // http(s)://host:port of slurmrestd; empty: the commands
  std::string api_version = "v0.0.38";
  // The account nodes and jobs are read as (slurmrestd refuses root's tokens).
  std::string user;
  // The key slurmctld checks tokens with (slurm.conf AuthAltTypes=auth/jwt,
  // AuthAltParameters=jwt_key=...), readable by the master's account only.
  std::string jwt_key_file;
  std::string ca_file;  // for an https url; empty: the system's
  // Where Slurm writes each job's output, as its owner, as the nodes see it
  // (a folder every owner may write, sticky like /tmp); empty: nowhere.
  std::string output_dir;
  std::chrono::seconds token_lifespan{300};
};

struct SlurmPoolOptions {
  std::string pool;       // the resource pool's name
  std::string partition;  // the Slurm partition whose nodes make up the pool (required)
  std::string account;    // sbatch --account; empty: the submitting user's default
  std::string qos;        // sbatch --qos; empty: the partition's default
  // More sbatch options, passed as they are (never ones the resource manager
  // sets itself: see ReservedSbatchOption).
  std::vector<std::string> sbatch_args;
  // Slots a node offers; 0: as Slurm reports the node (its CPUs on a cpu
  // pool, its gpu GRES on a cuda pool).
  int64_t slots_per_node = 0;
  SlurmSlotType slot_type = SlurmSlotType::kCuda;
  // The ringagent binary as the nodes see it (required; absolute).
  std::string agent_binary;
  // How the job's agents reach the master; empty: http(s)://<listen>.
  std::string master_url;
  // The CA file (PEM) job agents trust for an https master, as the nodes see
  // it; empty: the system's.
  std::string agent_ca_file;
  // Where batch scripts, job output and the allocations' credentials are
  // written; must be visible at the same path on the nodes. Empty:
  // <data_dir>/slurm/<pool>.
  std::string job_dir;
  // How often sinfo and squeue are asked.
  std::chrono::milliseconds poll_interval{1000};
  // A job's agents that have not all said hello this long after Slurm runs
  // the job: the allocation fails (an infrastructure failure).
  std::chrono::milliseconds agent_connect_timeout{120000};
  // Whose account runs the jobs (docs/slurm.md "Whose account runs the
  // jobs"): with a submit helper, each job runs as its owner's linked Unix
  // account; else every job runs as the master's own account, and the pool
  // is single-identity: master.yaml must say so (single_identity: true).
  std::string submit_helper;         // ring-slurm-submit, root-owned and setuid, on the master's machine
  std::string submit_helper_config;  // its settings file; empty: its default
  bool single_identity = false;
  // Through slurmrestd instead of the commands: jobs run as their owners.
  SlurmRestOptions rest;
  bool uses_rest() const { return !rest.url.empty(); }
  // Priority in Slurm: each job gets --nice=(priority - 1) * nice_per_priority
  // (0: no --nice), and the QOS of the first band whose max_priority is at
  // least the trial's priority (none: `qos`).
  int64_t nice_per_priority = 100;
  struct QosBand {
    int64_t max_priority = 0;
    std::string qos;
  };
  std::vector<QosBand> priority_qos;
  // The container runtime every node of the partition has (podman, docker,
  // apptainer or singularity): trials with environment.image run their
  // ranks in it; empty: the pool refuses images at submit.
  std::string container_runtime;
};

// Options of sbatch the resource manager sets itself; sbatch_args must not
// hold them. Returns the option's name when `arg` is one, else empty.
inline std::string ReservedSbatchOption(const std::string& arg) {
  static const char* const kReserved[] = {"--nodes",
                                          "-N",
                                          "--ntasks",
                                          "-n",
                                          "--ntasks-per-node",
                                          "--nodelist",
                                          "-w",
                                          "--gres",
                                          "--cpus-per-task",
                                          "-c",
                                          "--exclusive",
                                          "--partition",
                                          "-p",
                                          "--account",
                                          "-A",
                                          "--qos",
                                          "-q",
                                          "--output",
                                          "-o",
                                          "--error",
                                          "-e",
                                          "--job-name",
                                          "-J",
                                          "--parsable",
                                          "--wrap",
                                          "--export",
                                          "--chdir",
                                          "-D",
                                          "--nice",
                                          "--uid",
                                          "--gid"};
  const bool short_option = arg.size() > 1 && arg[0] == '-' && arg[1] != '-';
  const std::string name = short_option ? arg.substr(0, 2) : arg.substr(0, arg.find('='));
  for (const char* r : kReserved)
    if (name == r) return r;
  return "";
}

}  // namespace ring
