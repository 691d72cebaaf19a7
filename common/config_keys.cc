// The keys of Determined's experiment config (schemas/expconf/v0 at 0.38.1)
// that Ringmaster does not run, and what it does with each: accepts it with a
// warning where ignoring it cannot change what the trial computes, or refuses
// it (always, or unless it is empty) with what to use instead. The keys it
// runs are read by the section parsers; this table is the rest.
#include <string_view>

#include "common/config_parser.h"

namespace ring {
namespace {

enum class Handling {
  kWarn,               // accepted and ignored, with a warning
  kRefuse,             // refused
  kRefuseUnlessEmpty,  // accepted with a warning when null, false, "" or empty; else refused
};

struct ForeignKey {
  std::string_view section;  // "" for the top level
  std::string_view key;
  Handling handling;
  std::string_view why;  // completes "<path> is a Determined key Ringmaster ..."
};

constexpr const char* kNoCapabilities =
    "does not support: a trial's container runs with every capability dropped and cannot gain one "
    "(docs/containers.md)";

const ForeignKey kForeignKeys[] = {
    {"", "debug", Handling::kWarn, "ignores: it sets the log level of Determined's own harness"},
    {"", "profiling", Handling::kWarn,
     "ignores: Ringmaster has no profiler (what the trial computes is unchanged)"},
    {"", "optimizations", Handling::kWarn,
     "ignores: only Determined's Trial APIs (PyTorchTrial, DeepSpeedTrial) read it and Ringmaster runs Core "
     "API scripts, which it does not affect"},
    {"", "tensorboard_storage", Handling::kWarn, "ignores: Ringmaster has no TensorBoard yet"},
    {"", "integrations", Handling::kWarn,
     "ignores: it holds Pachyderm's settings and which webhooks fire for this experiment (webhook_id, "
     "webhook_name, exclude); Ringmaster has no Pachyderm integration, and its webhooks fire on their own "
     "triggers for every experiment they cover (ring webhook create), which a config cannot opt into or "
     "out of"},
    {"", "data_layer", Handling::kWarn,
     "ignores: it is deprecated in Determined and has no effect on Core API scripts"},
    {"", "internal", Handling::kWarn, "ignores: it holds Determined's internal settings"},
    {"", "pbs", Handling::kWarn,
     "ignores: it holds options of Determined's PBS launcher, and Ringmaster has no PBS resource manager "
     "(its pools are its own agents or Slurm partitions); Determined also ignores pbs outside PBS "
     "clusters"},
    {"", "slurm", Handling::kRefuseUnlessEmpty,
     "does not support per experiment: Slurm options (sbatch_args, slots_per_node, gpu_type...) are set "
     "on the Slurm pool in master.yaml (resource_pools[].resource_manager.sbatch_args and friends, "
     "docs/slurm.md); choose that pool with resources.resource_pool and remove slurm here"},
    {"", "perform_initial_validation", Handling::kWarn,
     "ignores: only Determined's Trial APIs read it; a Core API script validates when it chooses"},
    {"", "scheduling_unit", Handling::kWarn,
     "ignores: only Determined's Trial APIs read it; a Core API script reports when it chooses"},
    {"", "security", Handling::kWarn, "ignores: Kerberos is part of Determined's enterprise edition"},
    {"", "idle_timeout", Handling::kRefuse,
     "does not support in an experiment config: it belongs to a shell or notebook config (ring shell start "
     "--config-file, ring notebook start --config-file)"},
    {"", "notebook_idle_type", Handling::kRefuse,
     "does not support in an experiment config: it belongs to a notebook config (ring notebook start "
     "--config-file)"},
    {"", "work_dir", Handling::kRefuse,
     "does not support: it belongs to a notebook or command config, not an experiment config; a trial runs "
     "in "
     "its model definition's folder"},
    {"environment", "pod_spec", Handling::kRefuseUnlessEmpty,
     "does not support: Kubernetes pod specs; Ringmaster schedules trials on its own agents, choose them "
     "with "
     "resources.resource_pool"},
    {"environment", "proxy_ports", Handling::kRefuseUnlessEmpty,
     "does not support yet: the master's task proxy serves the servers of commands and notebooks "
     "(docs/interactive.md), not a trial's ports; reach them on the trial's agent"},
    {"environment", "ports", Handling::kRefuseUnlessEmpty,
     "does not support yet: ports are exposed by a container; a trial's process listens on its agent's host"},
    {"environment", "add_capabilities", Handling::kRefuseUnlessEmpty, kNoCapabilities},
    {"environment", "drop_capabilities", Handling::kWarn,
     "ignores: a trial's container already runs with every capability dropped"},
    {"resources", "agent_label", Handling::kRefuseUnlessEmpty,
     "does not support: it is deprecated in Determined; choose agents with resources.resource_pool"},
    {"resources", "devices", Handling::kRefuseUnlessEmpty,
     "does not support: a rank gets its slots' GPUs, and a container no other device of the host"},
    {"resources", "native_parallel", Handling::kRefuseUnlessEmpty,
     "does not support: it was removed from Determined; use a launcher (python3 -m determined.launch...)"},
    {"resources", "shm_size", Handling::kWarn,
     "ignores: a trial uses the host's /dev/shm, in a container too (it shares the host's IPC namespace)"},
    {"resources", "slots", Handling::kWarn,
     "ignores: it is the size of a notebook or command; an experiment's trials use "
     "resources.slots_per_trial"},
    {"checkpoint_storage", "propagation", Handling::kWarn, "ignores: it is a container mount option"},
    {"checkpoint_storage", "container_path", Handling::kWarn,
     "ignores: the trial reads and writes checkpoints at host_path, in a container too (the folder is "
     "mounted at its own path)"},
    {"checkpoint_storage", "tensorboard_path", Handling::kWarn, "ignores: Ringmaster has no TensorBoard yet"},
    {"checkpoint_storage", "checkpoint_path", Handling::kRefuseUnlessEmpty,
     "does not support: it is deprecated in Determined; use storage_path"},
};

// Null, false, "", 0, [] and {}: the value that asks for nothing.
bool IsEmpty(const YAML::Node& v) {
  if (!v.IsDefined() || v.IsNull()) return true;
  if (v.IsSequence() || v.IsMap()) return v.size() == 0;
  const std::string& s = v.Scalar();
  return s.empty() || s == "false" || s == "False" || s == "0";
}

}  // namespace

bool ConfigParser::DeterminedOnlyKey(const YAML::Node& key_node, const YAML::Node& value,
                                     const std::string& path, const std::string& key) {
  for (const ForeignKey& f : kForeignKeys) {
    if (f.section != path || f.key != key) continue;
    const std::string full = YamlWalker::Join(path, key);
    if (f.handling == Handling::kWarn)
      w_.Warn(key_node, full, full + " is a Determined key Ringmaster " + std::string(f.why));
    else if (f.handling == Handling::kRefuseUnlessEmpty && IsEmpty(value))
      w_.Warn(key_node, full, full + " is a Determined key Ringmaster ignores when empty, as here");
    else
      w_.Error(key_node, full, full + " is a Determined key Ringmaster " + std::string(f.why));
    return true;
  }
  return false;
}

}  // namespace ring
