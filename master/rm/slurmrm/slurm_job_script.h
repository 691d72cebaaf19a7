#pragma once
// One allocation as one Slurm job: the sbatch options that ask for its
// slots as Slurm understands them, and the batch script whose `srun` starts
// one ringagent per node in its one-allocation mode. Pure.
#include <string>
#include <vector>

#include "master/rm/slurmrm/slurm_options.h"

namespace ring {

struct SlurmJobRequest {
  std::string allocation_id;
  std::vector<std::string> nodes;  // Slurm node names, rank order (the scheduler's placements)
  int slots_per_node = 1;          // every node of a job holds the same count
  bool whole_nodes = false;        // the slots are all of each node's: --exclusive
  int64_t priority = 42;           // the trial's resources.priority (lower: more important)
};
// The options for `sbatch --parsable ... SCRIPT` (the job's name and output
// are the submitter's): partition, account and qos (or the priority's QOS
// band) from the pool, --nice from the priority, --nodes/--nodelist/
// --ntasks-per-node=1, --gres=gpu:N on a cuda pool or --cpus-per-task=N on a
// cpu pool, --exclusive for whole nodes, then the pool's sbatch_args.
std::vector<std::string> SbatchArgs(const SlurmPoolOptions& pool, const SlurmJobRequest& job);

// The variable of a job's environment that holds its allocation's
// credential when the job has no folder of its own (through slurmrestd).
inline constexpr const char* kJobCredentialVariable = "RING_ALLOCATION_CREDENTIAL";

struct JobAgentCommand {
  std::string agent_binary;
  std::string master_url;
  std::string allocation_id;
  std::string credential_file;  // empty: the credential is in kJobCredentialVariable
  std::string ca_file;          // empty: none
  // The runtime the nodes run containers with (--container-runtimes);
  // empty: the agent's default.
  std::string container_runtime;
};
// A /bin/sh script: srun, one task per node, each `ringagent
// --slurm-allocation ... [--container-runtimes RUNTIME]`.
std::string BatchScript(const JobAgentCommand& command);

// Single-quoted for /bin/sh.
std::string ShellQuote(const std::string& text);

}  // namespace ring
