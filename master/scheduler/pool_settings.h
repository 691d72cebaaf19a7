#pragma once
// A resource pool as master.yaml declares it: a name agents join with
// `--pool`, and the policy its scheduler follows.
#include <algorithm>
#include <string>
#include <vector>

#include "common/launch_mode.h"

namespace ring {

struct PoolSettings {
  std::string name;
  std::string description;
  std::string scheduler = "priority";   // priority | fair_share
  bool preemption = true;               // may a waiting request stop running work?
  std::string fitting_policy = "best";  // best (pack) | worst (spread)
  // Who may submit to the pool: these users and every admin. Empty: anyone.
  std::vector<std::string> allowed_users;
  // How experiments that leave resources.launch at auto start their
  // processes here (master.yaml resource_pools[].launch); kAuto: by the
  // entrypoint rule (docs/distributed.md).
  LaunchMode launch = LaunchMode::kAuto;
  // The container runtime trials with environment.image use here
  // (master.yaml resource_pools[].container_runtime: podman, docker,
  // apptainer or singularity); empty: any the agent has.
  std::string container_runtime;
  // Tasks that are not trials (commands, shells, notebooks) may hold no
  // slot here: CPU-only helpers, placed on an agent without taking a slot
  // (master.yaml resource_pools[].zero_slot_tasks).
  bool zero_slot_tasks = false;
};

// Whether `username` (an admin when `admin`) may submit work to `pool`.
bool MaySubmitTo(const PoolSettings& pool, const std::string& username, bool admin);

// The pools when master.yaml names none: "default", priority, preemption on, best fit.
std::vector<PoolSettings> DefaultPools();

}  // namespace ring
