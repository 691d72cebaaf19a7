#include "master/rm/slurmrm/slurm_rest_job.h"

#include <algorithm>

namespace ring {
namespace {

// sbatch's name → the job description's, where they differ (slurmrestd
// 22.05's table of job parameters; it reads names case-insensitively).
const std::map<std::string, std::string>& Renamed() {
  static const std::map<std::string, std::string> k = {
      {"acctg-freq", "account_gather_frequency"},
      {"batch", "batch_features"},
      {"bb", "burst_buffer"},
      {"begin", "begin_time"},
      {"constraint", "constraints"},
      {"core-spec", "core_specification"},
      {"cpu-freq", "cpu_frequency"},
      {"exclude", "exclude_nodes"},
      {"gpu-bind", "gpu_binding"},
      {"gpu-freq", "gpu_frequency"},
      {"hint", "cpu_binding hint"},
      {"kill-on-invalid-dep", "kill_on_invalid_dependency"},
      {"license", "licenses"},
      {"mem", "memory_per_node"},
      {"mem-bind", "memory_binding"},
      {"mem-per-cpu", "memory_per_cpu"},
      {"mem-per-gpu", "memory_per_gpu"},
      {"mincpus", "minimum_cpus_per_node"},
      {"thread-spec", "thread_specification"},
      {"time", "time_limit"},
      {"time-min", "time minimum"},
      {"tmp", "temporary_disk_per_node"},
      {"use-min-nodes", "minimum_nodes"},
  };
  return k;
}

// Options whose field has sbatch's name with '_' for '-'.
const std::vector<std::string>& SameName() {
  static const std::vector<std::string> k = {
      "account",
      "comment",
      "cores-per-socket",
      "cpus-per-gpu",
      "cpus-per-task",
      "cluster-constraint",
      "deadline",
      "delay-boot",
      "dependency",
      "distribution",
      "exclusive",
      "gpus",
      "gpus-per-node",
      "gpus-per-socket",
      "gpus-per-task",
      "gres",
      "gres-flags",
      "hold",
      "licenses",
      "mail-type",
      "mail-user",
      "nice",
      "no-kill",
      "no-requeue",
      "nodelist",
      "nodes",
      "ntasks-per-core",
      "ntasks-per-gpu",
      "ntasks-per-node",
      "open-mode",
      "partition",
      "profile",
      "qos",
      "requeue",
      "reservation",
      "signal",
      "sockets-per-node",
      "spread-job",
      "threads-per-core",
      "umask",
      "wait-all-nodes",
      "wckey",
  };
  return k;
}

}  // namespace

Result<std::string> RestJobField(const std::string& option) {
  if (option.rfind("--", 0) != 0 || option.size() < 3)
    return InvalidArgument("\"" + option + "\" is not a long sbatch option (--name or --name=value)");
  const std::string name = option.substr(2, option.find('=') - 2);
  if (auto it = Renamed().find(name); it != Renamed().end()) return it->second;
  if (std::find(SameName().begin(), SameName().end(), name) != SameName().end()) {
    std::string field = name;
    std::replace(field.begin(), field.end(), '-', '_');
    return field;
  }
  return InvalidArgument("--" + name +
                         " has no field in slurmrestd's job description: remove it, or submit with the "
                         "commands (no rest)");
}

Result<nlohmann::json> RestJobBody(const RestJobSubmission& job) {
  nlohmann::json fields = nlohmann::json::object();
  for (const auto& option : job.options) {
    auto field = RestJobField(option);
    if (!field.ok()) return field.status();
    const size_t eq = option.find('=');
    if (eq != std::string::npos)
      fields[*field] = option.substr(eq + 1);
    else if (*field == "exclusive")
      fields[*field] = "exclusive";
    else
      fields[*field] = true;
  }
  fields["name"] = job.name;
  fields["current_working_directory"] = job.work_dir;
  fields["standard_output"] = job.output;
  fields["standard_error"] = job.output;
  fields["environment"] = job.environment;
  return nlohmann::json{{"script", job.script}, {"job", std::move(fields)}};
}

}  // namespace ring
