// ExperimentController: resource pools and the settings scheduling reads —
// an experiment's pool, priority, weight and max_slots (as set live), agents
// disabled or draining — and the job queue as users see it.
#include <algorithm>
#include <set>
#include <tuple>

#include <spdlog/spdlog.h>

#include "master/core/experiment_controller.h"

namespace ring {

EffectiveResources ExperimentController::ResourcesLocked(int64_t experiment_id) {
  EffectiveResources r;
  if (const ExperimentConfig* config = ConfigLocked(experiment_id)) {
    r.pool = config->resources.resource_pool;
    r.slots_per_trial = static_cast<int>(config->resources.slots_per_trial);
    r.priority = config->resources.priority;
    r.weight = config->resources.weight;
    r.max_slots = config->resources.max_slots;
  }
  auto it = overrides_.find(experiment_id);
  if (it == overrides_.end()) {
    auto stored = store_.GetResourceOverrides(experiment_id);
    it = overrides_.emplace(experiment_id, stored.ok() ? *stored : ResourceOverrides{}).first;
  }
  if (it->second.priority) r.priority = *it->second.priority;
  if (it->second.weight) r.weight = *it->second.weight;
  if (it->second.max_slots) r.max_slots = *it->second.max_slots;
  return r;
}

EffectiveResources ExperimentController::Resources(int64_t experiment_id) {
  std::lock_guard lock(mu_);
  return ResourcesLocked(experiment_id);
}

// A pool must be declared in master.yaml or have agents; a trial must fit the
// pool's agents as they are (one agent, or whole agents of one size).
Status ExperimentController::CheckPoolLocked(const ResourcesConfig& resources) {
  std::set<std::string> pools;
  for (const auto& p : options_.pools) pools.insert(p.name);
  std::map<std::pair<std::string, int>, int> agents_of_size;  // (slot type, size) -> agents in the pool
  bool pool_has_agents = false;
  for (const auto& [id, a] : agents_.agents()) {
    pools.insert(a.pool);
    if (a.pool != resources.resource_pool || a.liveness == AgentLiveness::kLost || a.slots.empty()) continue;
    pool_has_agents = true;
    ++agents_of_size[{a.slots.front().type, static_cast<int>(a.slots.size())}];
  }
  if (!pools.count(resources.resource_pool)) {
    std::string names;
    for (const auto& n : pools) names += (names.empty() ? "" : ", ") + n;
    return Status(ErrorCode::kInvalidConfig, "resources.resource_pool: there is no pool named \"" +
                                                 resources.resource_pool + "\"; this master has: " + names);
  }
  if (!pool_has_agents) return Status::Ok();  // agents may join later
  const int64_t want = resources.slots_per_trial;
  int64_t largest = 0;
  for (const auto& [key, count] : agents_of_size) {
    const int size = key.second;
    largest = std::max<int64_t>(largest, size);
    if (want <= size || (want % size == 0 && want / size <= count)) return Status::Ok();
  }
  return Status(ErrorCode::kInvalidConfig,
                "resources.slots_per_trial: " + std::to_string(want) + " slots can never be placed in pool " +
                    resources.resource_pool + ": its largest agent has " + std::to_string(largest) +
                    " slots and a larger trial needs whole agents of one size adding up to it");
}

Status ExperimentController::SetResources(int64_t experiment_id, const nlohmann::json& patch) {
  if (!patch.is_object() || patch.empty())
    return InvalidArgument("body must be an object with priority, weight and/or max_slots");
  std::lock_guard lock(mu_);
  auto exp = store_.GetExperiment(experiment_id);
  if (!exp.ok()) return exp.status();
  ResourcesLocked(experiment_id);  // loads the current overrides
  ResourceOverrides next = overrides_[experiment_id];
  for (const auto& [key, value] : patch.items()) {
    if (key == "priority") {
      if (!value.is_number_integer() || value.get<int64_t>() < 1 || value.get<int64_t>() > 99)
        return InvalidArgument("priority must be an integer from 1 to 99 (lower runs first)");
      next.priority = value.get<int64_t>();
    } else if (key == "weight") {
      if (!value.is_number() || !(value.get<double>() > 0) || !std::isfinite(value.get<double>()))
        return InvalidArgument("weight must be a positive number");
      next.weight = value.get<double>();
    } else if (key == "max_slots") {
      if (value.is_null()) {
        next.max_slots.reset();
        continue;
      }
      if (!value.is_number_integer() || value.get<int64_t>() < 1)
        return InvalidArgument("max_slots must be a positive integer, or null for no limit");
      next.max_slots = value.get<int64_t>();
    } else {
      return InvalidArgument("unknown field \"" + key + "\"; use priority, weight or max_slots");
    }
  }
  if (Status s = store_.SetResourceOverrides(experiment_id, next); !s.ok()) return s;
  overrides_[experiment_id] = next;
  spdlog::info("[controller] experiment {}: resources set to {}", experiment_id, patch.dump());
  ScheduleLocked();
  return Status::Ok();
}

Status ExperimentController::DisableAgent(const std::string& agent_id, bool drain) {
  std::lock_guard lock(mu_);
  AgentEntry* agent = agents_.Find(agent_id);
  if (!agent) return NotFound("agent " + agent_id + " is not known");
  if (Status s = store_.SetAgentSchedulable(agent_id, false, drain); !s.ok()) return s;
  agent->enabled = false;
  agent->draining = drain;
  spdlog::info("[controller] agent {} disabled{}", agent_id, drain ? "; draining its running work" : "");
  if (drain) return Status::Ok();
  const auto now = std::chrono::steady_clock::now();
  for (auto& [id, alloc] : live_)
    for (const auto& p : alloc.placements)
      if (p.agent_id == agent_id) RequestPreemptionLocked(alloc, now, "preempted");
  return Status::Ok();
}

Status ExperimentController::EnableAgent(const std::string& agent_id) {
  std::lock_guard lock(mu_);
  AgentEntry* agent = agents_.Find(agent_id);
  if (!agent) return NotFound("agent " + agent_id + " is not known");
  if (Status s = store_.SetAgentSchedulable(agent_id, true, false); !s.ok()) return s;
  agent->enabled = true;
  agent->draining = false;
  spdlog::info("[controller] agent {} enabled", agent_id);
  ScheduleLocked();
  return Status::Ok();
}

// Every allocation that holds or wants slots, pool by pool: the running ones
// in the order they started, then the pending ones in the order the last
// scheduling pass considered them, each with that pass's reason.
nlohmann::json ExperimentController::JobsJson() {
  std::lock_guard lock(mu_);
  struct Row {
    std::string pool;
    bool pending = false;
    int64_t rank = 0;  // started_seq, or place in the pass order
    std::string id;
  };
  std::vector<Row> rows;
  for (size_t i = 0; i < pending_.size(); ++i) {
    const auto& id = pending_[i];
    auto pos = pass_positions_.find(id);
    const int64_t rank =
        pos != pass_positions_.end() ? pos->second : static_cast<int64_t>(pending_.size() + i);
    rows.push_back({live_.at(id).pool, true, rank, id});
  }
  for (const auto& [id, alloc] : live_)
    if (alloc.record.state != AllocationState::kPending)
      rows.push_back({alloc.pool, false, alloc.started_seq, id});
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return std::tie(a.pool, a.pending, a.rank, a.id) < std::tie(b.pool, b.pending, b.rank, b.id);
  });

  nlohmann::json jobs = nlohmann::json::array();
  std::string pool;
  int position = 0;
  for (const auto& row : rows) {
    const LiveAllocation& alloc = live_.at(row.id);
    const EffectiveResources r = ResourcesLocked(alloc.experiment_id);
    auto exp = store_.GetExperiment(alloc.experiment_id);
    nlohmann::json j = {{"allocation_id", row.id},
                        {"trial_id", alloc.record.trial_id},
                        {"experiment_id", alloc.experiment_id},
                        {"owner", exp.ok() ? exp->owner : ""},
                        {"state", ToString(alloc.record.state)},
                        {"slots", alloc.world_size},
                        {"pool", alloc.pool},
                        {"priority", r.priority},
                        {"weight", r.weight},
                        {"queued_at", alloc.record.created_at},
                        {"preempting", alloc.preempt_requested},
                        {"position", nullptr},
                        {"pending_reason", nullptr}};
    if (row.pool != pool) position = 0;
    pool = row.pool;
    if (row.pending) {
      j["position"] = ++position;
      auto reason = pending_reasons_.find(row.id);
      j["pending_reason"] = reason != pending_reasons_.end()
                                ? reason->second
                                : "queued; the next scheduling pass places or explains it";
    }
    jobs.push_back(std::move(j));
  }
  return jobs;
}

}  // namespace ring
