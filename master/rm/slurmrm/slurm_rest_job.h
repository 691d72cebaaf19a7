#pragma once
// One allocation's job as slurmrestd takes it (POST /slurm/<version>/job/
// submit): the sbatch options of SbatchArgs and a pool's sbatch_args turned
// into the job description's fields, which are sbatch's long options under
// their OpenAPI names (--time is time_limit, --mem memory_per_node, ...).
// Pure, so that master.yaml is checked with the same table that submits.
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace ring {

// The job description field of the long sbatch option `option` ("--time=10"
// or "--hold"), or an error naming the option when slurmrestd takes no such
// field (short options included: write them long).
Result<std::string> RestJobField(const std::string& option);

// What slurmrestd needs beside the options: Slurm runs the script as the
// token's user with exactly this environment, in `work_dir`, its output
// (and errors) in `output`.
struct RestJobSubmission {
  std::string name;
  std::vector<std::string> options;  // long sbatch options
  std::string script;
  std::map<std::string, std::string> environment;
  std::string work_dir = "/tmp";
  std::string output = "/dev/null";
};
// The request body: {"script": ..., "job": {fields}}. A flag option is true
// (--exclusive is "exclusive", Slurm's word for whole nodes), an option
// with a value is that value as text, which Slurm parses as sbatch would.
Result<nlohmann::json> RestJobBody(const RestJobSubmission& job);

}  // namespace ring
