#pragma once
// How the Slurm resource manager talks to Slurm: its own commands with
// machine-readable output (sinfo --json, squeue --json, sbatch --parsable,
// scancel). An interface, so that the resource manager's decisions are
// tested against a fake; the real one runs the programs with a timeout.
// Called on the resource manager's own command thread only: each call may
// wait for slurmctld.
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"

namespace ring {

class SlurmCommands {
 public:
  virtual ~SlurmCommands() = default;
  // The standard output of `sinfo --json` / `squeue --json --me`.
  virtual Result<std::string> SinfoJson() = 0;
  virtual Result<std::string> SqueueJson() = 0;
  // `sbatch --parsable ARGS SCRIPT`: the job id.
  virtual Result<int64_t> Sbatch(const std::vector<std::string>& args, const std::string& script) = 0;
  // `scancel JOB`; with `signal`, `scancel --signal=SIGNAL --full JOB`.
  virtual Status Scancel(int64_t job_id, const std::string& signal = "") = 0;
};

// Runs the installed programs (found on PATH), each bounded by `timeout`.
class ProcessSlurmCommands : public SlurmCommands {
 public:
  explicit ProcessSlurmCommands(std::chrono::milliseconds timeout = std::chrono::seconds(30))
      : timeout_(timeout) {}
  Result<std::string> SinfoJson() override;
  Result<std::string> SqueueJson() override;
  Result<int64_t> Sbatch(const std::vector<std::string>& args, const std::string& script) override;
  Status Scancel(int64_t job_id, const std::string& signal) override;

 private:
  const std::chrono::milliseconds timeout_;
};

struct CommandOutput {
  int exit_code = -1;  // -1: killed at the timeout or by a signal, or not started
  std::string out;
  std::string err;
};
// Runs `argv` (argv[0] looked up on PATH), stdin from /dev/null, both
// streams captured (each cut at 16 MiB), killed after `timeout`.
CommandOutput RunProgram(const std::vector<std::string>& argv, std::chrono::milliseconds timeout);

}  // namespace ring
