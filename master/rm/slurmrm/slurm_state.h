#pragma once
// What Slurm says about a partition's nodes and our jobs, parsed from the
// JSON of `sinfo --json` and `squeue --json` (Slurm 22.05's OpenAPI v0.0.38
// shapes; later versions' state arrays are read too), and Slurm's pending
// reasons as sentences. Pure: no commands are run here.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace ring {

struct SlurmNode {
  std::string name;
  std::string state;               // idle, mixed, allocated, down, ...
  std::vector<std::string> flags;  // DRAIN, NOT_RESPONDING, ...
  std::vector<std::string> partitions;
  int64_t cpus = 0;
  int64_t gpus = 0;  // of its gpu GRES
  // Slurm may start jobs there: not down, drained, failing or not responding.
  bool usable = false;
};
Result<std::vector<SlurmNode>> ParseSinfoJson(std::string_view json);
// The count of a GRES string's gpus: "gpu:4", "gpu:a100:2(S:0-1),gpu:v100:1".
int64_t GpusInGres(std::string_view gres);

struct SlurmJob {
  int64_t id = 0;
  std::string name;
  std::string state;     // PENDING, RUNNING, COMPLETED, NODE_FAIL, ...
  std::string reason;    // why it pends (Priority, Resources, ...); "None" when running
  std::string nodes;     // Slurm's node list, e.g. n[1-2]
  int64_t user_id = -1;  // the account it runs as (squeue); -1: not given
  std::string work_dir;  // its current_working_directory (squeue)
  // Read from accounting (sacct) after the job left the queue.
  bool from_accounting = false;
  std::optional<int64_t> exit_code;  // sacct's return code, when it has one
};
Result<std::vector<SlurmJob>> ParseSqueueJson(std::string_view json);
// `sacct --json`'s jobs (state {current, reason}, exit_code {return_code}).
Result<std::vector<SlurmJob>> ParseSacctJson(std::string_view json);

// A state after which the job holds nothing any more.
bool SlurmJobEnded(std::string_view state);
// Why a job waits, in a sentence for `ring job list` (unknown reasons are
// quoted as Slurm names them).
std::string DescribePendingReason(std::string_view reason);

}  // namespace ring
