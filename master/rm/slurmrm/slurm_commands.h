#pragma once
// How the Slurm resource manager talks to Slurm: its own commands with
// machine-readable output (sinfo --json, squeue --json, sacct --json,
// sbatch --parsable, scancel). An interface, so that the resource manager's
// decisions are tested against a fake; the real ones run the programs with
// a timeout, either as the master's own account (a single-identity pool) or
// through the root-owned submit helper that runs sbatch and scancel as each
// job's owner (docs/slurm.md "Whose account runs the jobs"). Called on the
// resource manager's own command thread only: each call may wait for
// slurmctld.
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/agent_protocol.h"
#include "common/status.h"

namespace ring {

// One allocation's job as sbatch gets it.
struct SbatchJob {
  std::string allocation_id;
  std::vector<std::string> args;       // the options of SbatchArgs: slots, nodes, pool settings
  std::string folder;                  // <job_dir>/<allocation>: script, credential, Slurm's output
  std::string script;                  // the batch script (BatchScript)
  std::string credential;              // the allocation's credential, for the job's agents
  std::optional<proto::RunAs> run_as;  // the owner's linked account; absent: unlinked
  std::string container_runtime;       // the pool's, for the job's agents; empty: none
};

class SlurmCommands {
 public:
  virtual ~SlurmCommands() = default;
  // The standard output of `sinfo --json` / `squeue --json --partition=P`.
  virtual Result<std::string> SinfoJson() = 0;
  virtual Result<std::string> SqueueJson(const std::string& partition) = 0;
  // The standard output of `sacct --json --jobs=...`: how jobs that left the
  // queue ended, where the site keeps accounting (an error where it does not).
  virtual Result<std::string> SacctJson(const std::vector<int64_t>& job_ids) = 0;
  // Writes the job's folder and submits it: the job id.
  virtual Result<int64_t> Sbatch(const SbatchJob& job) = 0;
  // `scancel JOB`; with `signal`, `scancel --signal=SIGNAL --full JOB`.
  virtual Status Scancel(int64_t job_id, const std::string& signal = "") = 0;
};

// Runs the installed programs (found on PATH) as the master's own account,
// each bounded by `timeout`: every job runs as that account.
class ProcessSlurmCommands : public SlurmCommands {
 public:
  explicit ProcessSlurmCommands(std::chrono::milliseconds timeout = std::chrono::seconds(30))
      : timeout_(timeout) {}
  Result<std::string> SinfoJson() override;
  Result<std::string> SqueueJson(const std::string& partition) override;
  Result<std::string> SacctJson(const std::vector<int64_t>& job_ids) override;
  Result<int64_t> Sbatch(const SbatchJob& job) override;
  Status Scancel(int64_t job_id, const std::string& signal) override;

 protected:
  const std::chrono::milliseconds timeout_;
};

// Submits and cancels through the submit helper (`ring-slurm-submit`,
// root-owned, setuid): it checks the allocation's credential with the
// master and runs sbatch as the owner's linked account, writing the job's
// folder as that account. sinfo, squeue and sacct run as the master.
class HelperSlurmCommands : public ProcessSlurmCommands {
 public:
  // `config`: the helper's configuration file; empty: its default.
  HelperSlurmCommands(std::string helper, std::string config,
                      std::chrono::milliseconds timeout = std::chrono::seconds(30))
      : ProcessSlurmCommands(timeout), helper_(std::move(helper)), config_(std::move(config)) {}
  Result<int64_t> Sbatch(const SbatchJob& job) override;
  Status Scancel(int64_t job_id, const std::string& signal) override;

 private:
  std::vector<std::string> Command(const std::string& verb) const;
  const std::string helper_;
  const std::string config_;
};

struct CommandOutput {
  int exit_code = -1;  // -1: killed at the timeout or by a signal, or not started
  std::string out;
  std::string err;
};
// Runs `argv` (argv[0] looked up on PATH), `input` on its stdin (then
// closed; /dev/null when empty), both streams captured (each cut at 16
// MiB), killed after `timeout`.
CommandOutput RunProgram(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                         const std::string& input = "");

// The job id in sbatch --parsable's answer ("JOBID" or "JOBID;CLUSTER").
Result<int64_t> ParseSbatchAnswer(const std::string& out);

}  // namespace ring
