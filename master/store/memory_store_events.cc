// MemoryStore: metrics, logs and agents, mirroring SqliteStore's constraints.
#include <algorithm>
#include <cstdint>

#include "master/store/memory_store.h"
#include "master/store/store_util.h"

namespace ring {

Result<int64_t> MemoryStore::AddMetrics(const std::vector<MetricReport>& reports) {
  const WriteNotice changes(metrics_generation_);
  std::lock_guard lock(mu_);
  // All or nothing, as in SqliteStore's single transaction: check every report first.
  for (const MetricReport& r : reports) {
    std::string what = "add " + std::string(ToString(r.kind)) + " metrics of trial " +
                       std::to_string(r.trial_id) + " at batch " + std::to_string(r.batches);
    if (r.batches < 0) return InvalidArgument(what + ": batches must not be negative");
    if (!trials_.contains(r.trial_id)) return InvalidArgument(what + ": trial does not exist");
  }
  const std::string now = NowRfc3339();
  int64_t added = 0;
  bool raised = false;
  for (const MetricReport& r : reports) {
    MetricReport stored = r;
    stored.reported_at = now;
    if (metrics_.try_emplace(MetricKey{r.trial_id, r.kind, r.batches}, std::move(stored)).second) ++added;
    int64_t& total = trials_.at(r.trial_id).total_batches;
    if (r.kind == MetricKind::kTraining && r.batches > total) {
      total = r.batches;
      raised = true;
    }
  }
  if (raised) experiments_generation_.fetch_add(1, std::memory_order_acq_rel);
  return added;
}

Result<std::vector<MetricReport>> MemoryStore::GetMetrics(int64_t trial_id, MetricKind kind) {
  std::lock_guard lock(mu_);
  std::vector<MetricReport> out;
  for (auto it = metrics_.lower_bound(MetricKey{trial_id, kind, INT64_MIN});
       it != metrics_.end() && std::get<0>(it->first) == trial_id && std::get<1>(it->first) == kind; ++it) {
    out.push_back(it->second);
  }
  return out;
}

Status MemoryStore::AddLogs(const std::vector<LogRecord>& lines) {
  std::lock_guard lock(mu_);
  for (const LogRecord& l : lines) {
    if (!trials_.contains(l.trial_id)) {
      return InvalidArgument("add logs of trial " + std::to_string(l.trial_id) + ": trial does not exist");
    }
  }
  for (const LogRecord& l : lines) {
    LogRecord stored = l;
    stored.id = next_log_id_++;
    logs_[l.trial_id].push_back(std::move(stored));
  }
  return Status::Ok();
}

Result<bool> MemoryStore::AddLogPolicyMatch(const LogPolicyMatch& m) {
  const WriteNotice changes(experiments_generation_);  // a trial's log signal
  std::lock_guard lock(mu_);
  if (!trials_.contains(m.trial_id))
    return InvalidArgument("add a log policy match of trial " + std::to_string(m.trial_id) +
                           ": trial does not exist");
  auto& matches = log_policy_matches_[m.trial_id];
  for (const auto& known : matches)
    if (known.policy == m.policy && known.node == m.node) return false;
  LogPolicyMatch stored = m;
  stored.matched_at = NowRfc3339();
  matches.push_back(std::move(stored));
  return true;
}

Result<std::vector<LogPolicyMatch>> MemoryStore::ListLogPolicyMatches(int64_t trial_id) {
  std::lock_guard lock(mu_);
  auto it = log_policy_matches_.find(trial_id);
  if (it == log_policy_matches_.end()) return std::vector<LogPolicyMatch>{};
  return it->second;
}

Result<std::vector<LogRecord>> MemoryStore::GetLogs(int64_t trial_id, int rank, int64_t after_id,
                                                    int64_t limit) {
  if (Status s = CheckPage(limit, 0); !s.ok()) return s;
  std::lock_guard lock(mu_);
  std::vector<LogRecord> out;
  auto trial = logs_.find(trial_id);
  if (trial == logs_.end()) return out;
  const std::vector<LogRecord>& lines = trial->second;
  auto it = std::upper_bound(lines.begin(), lines.end(), after_id,
                             [](int64_t id, const LogRecord& l) { return id < l.id; });
  for (; it != lines.end() && static_cast<int64_t>(out.size()) < limit; ++it) {
    if (rank < 0 || it->rank == rank) out.push_back(*it);
  }
  return out;
}

Status MemoryStore::UpsertAgent(const AgentRecord& a) {
  std::lock_guard lock(mu_);
  if (a.id.empty()) return InvalidArgument("upsert agent: id must not be empty");
  if (!IsKnown(a.state)) return InvalidArgument("upsert agent '" + a.id + "': unknown state");
  const std::string now = NowRfc3339();
  AgentRecord stored = a;
  auto it = agents_.find(a.id);
  stored.registered_at = it == agents_.end() ? now : it->second.registered_at;
  stored.enabled = it == agents_.end() ? true : it->second.enabled;
  stored.draining = it == agents_.end() ? false : it->second.draining;
  if (stored.last_seen_at.empty()) stored.last_seen_at = now;
  agents_[a.id] = std::move(stored);
  return Status::Ok();
}

Result<std::vector<AgentRecord>> MemoryStore::ListAgents() {
  std::lock_guard lock(mu_);
  std::vector<AgentRecord> out;
  for (const auto& [id, a] : agents_) out.push_back(a);
  return out;
}

Status MemoryStore::SetAgentSchedulable(const std::string& id, bool enabled, bool draining) {
  std::lock_guard lock(mu_);
  auto it = agents_.find(id);
  if (it == agents_.end()) return NotFound("agent '" + id + "' not found");
  it->second.enabled = enabled;
  it->second.draining = !enabled && draining;
  return Status::Ok();
}

Status MemoryStore::SetResourceOverrides(int64_t experiment_id, const ResourceOverrides& o) {
  std::lock_guard lock(mu_);
  if (!experiments_.contains(experiment_id))
    return NotFound("experiment " + std::to_string(experiment_id) + " not found");
  if ((o.priority && (*o.priority < 1 || *o.priority > 99)) || (o.weight && !(*o.weight > 0)) ||
      (o.max_slots && *o.max_slots < 1) ||
      (o.admin_priority && (*o.admin_priority < 1 || *o.admin_priority > 99)) ||
      (o.admin_max_slots && *o.admin_max_slots < 1))
    return InvalidArgument("resource overrides: priority 1-99, weight > 0, max_slots >= 1");
  overrides_[experiment_id] = o;
  return Status::Ok();
}

Result<ResourceOverrides> MemoryStore::GetResourceOverrides(int64_t experiment_id) {
  std::lock_guard lock(mu_);
  if (!experiments_.contains(experiment_id))
    return NotFound("experiment " + std::to_string(experiment_id) + " not found");
  auto it = overrides_.find(experiment_id);
  return it == overrides_.end() ? ResourceOverrides{} : it->second;
}

}  // namespace ring
