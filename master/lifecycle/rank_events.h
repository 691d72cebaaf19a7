#pragma once
// What the resource manager reports about ranks and nodes, applied to the
// allocations: process states (a failed rank ends its whole gang; the last
// exit ends the allocation with its cause), log batches (deduplicated and
// rate limited), nodes that come back, are lost or evicted; and the
// deadlines of unreported allocations and ignored preemptions. Used on the
// lifecycle's executor only.
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/agent_protocol.h"
#include "master/lifecycle/allocations.h"
#include "master/lifecycle/experiment_settings.h"
#include "master/lifecycle/log_policies.h"
#include "master/maintenance/log_limiter.h"

namespace ring {

class RankEvents {
 public:
  RankEvents(Store& store, Allocations& allocations, ExperimentSettings& settings, LogPolicies& log_policies,
             ResourceManager& rm, LogLimits log_limits, std::chrono::milliseconds heartbeat_timeout);
  void OnRankState(const std::string& node, const proto::StateChange& change);
  // Lines a rank printed on `node`: matched against the log policies, then
  // rate limited and stored.
  void OnLogs(const std::string& node, const proto::LogBatch& batch);
  void OnNodeConnected(const std::string& node, const std::vector<proto::RunningProcess>& running,
                       SteadyTime now);
  void OnNodeLost(const std::string& node);
  void OnAllocationLost(const std::string& allocation_id, const std::string& why,
                        EndCause cause = EndCause::kAgentLost);
  void OnAllocationPreempted(const std::string& allocation_id, const std::string& why, SteadyTime now);
  void OnNodeEvicted(const std::string& node, SteadyTime now);
  // Allocations whose node came back without them, and running ones that
  // ignored a preemption past its deadline.
  void Tick(SteadyTime now);
  // Forgets what the log deduplication kept of an ended allocation.
  void Forget(const std::string& allocation_id);
  // The preemption timeout of the experiment.
  std::chrono::seconds PreemptionTimeout(int64_t experiment_id);
  // Called with every batch of a trial's lines (tokens hidden), before the
  // rate limit: the webhooks' log triggers.
  using TrialLinesHandler = std::function<void(int64_t experiment_id, const std::string& node,
                                               const std::vector<LogRecord>& lines)>;
  void OnTrialLines(TrialLinesHandler handler) { on_trial_lines_ = std::move(handler); }

 private:
  Store& store_;
  Allocations& allocations_;
  ExperimentSettings& settings_;
  LogPolicies& log_policies_;
  ResourceManager& rm_;
  LogLimiter log_limiter_;
  const std::chrono::milliseconds heartbeat_timeout_;
  std::map<std::pair<std::string, int>, int64_t> log_seq_;  // last log batch seq per (allocation, rank)
  TrialLinesHandler on_trial_lines_;
};

}  // namespace ring
