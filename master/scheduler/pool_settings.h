#pragma once
// A resource pool as master.yaml declares it: a name agents join with
// `--pool`, and the policy its scheduler follows.
#include <string>
#include <vector>

namespace ring {

struct PoolSettings {
  std::string name;
  std::string description;
  std::string scheduler = "priority";   // priority | fair_share
  bool preemption = true;               // may a waiting request stop running work?
  std::string fitting_policy = "best";  // best (pack) | worst (spread)
};

// The pools when master.yaml names none: "default", priority, preemption on, best fit.
std::vector<PoolSettings> DefaultPools();

}  // namespace ring
