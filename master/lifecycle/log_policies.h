#pragma once
// log_policies in force: each experiment's compiled patterns and each
// trial's matches. A line of a trial's output that matches a policy is
// stored once per (trial, policy, node) (Store::AddLogPolicyMatch); the
// latest match names the trial's log signal. cancel_retries makes the
// trial's next failure final (rule F15 of docs/failure-model.md);
// exclude_node keeps its later allocations off the node that printed it.
// Used on the lifecycle's executor only.
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/log_policy.h"
#include "master/lifecycle/allocations.h"
#include "master/lifecycle/experiment_settings.h"
#include "master/store/store.h"

namespace ring {

class LogPolicies {
 public:
  LogPolicies(Store& store, ExperimentSettings& settings);

  // Lines a rank of `alloc` printed on `node` (tokens already hidden).
  void OnLines(const LiveAllocation& alloc, const std::string& node, const std::vector<LogRecord>& lines);
  // A cancel_retries policy matched a line of the trial.
  bool RetriesCanceled(int64_t experiment_id, int64_t trial_id);
  // Nodes where an exclude_node policy matched a line of the trial, sorted.
  const std::vector<std::string>& ExcludedNodes(int64_t experiment_id, int64_t trial_id);
  // Drops what is kept in memory of a trial that ended (its matches stay stored).
  void Forget(int64_t trial_id);

 private:
  struct Compiled {
    std::string label;
    LogPolicyAction action = LogPolicyAction::kNone;
    std::unique_ptr<LogPattern> pattern;
  };
  struct TrialMatches {
    std::set<std::pair<std::string, std::string>> seen;  // (policy, node)
    bool retries_canceled = false;
    std::vector<std::string> excluded;  // sorted
    void Add(const std::string& policy, LogPolicyAction action, const std::string& node);
  };
  const std::vector<Compiled>& PoliciesOf(int64_t experiment_id);
  bool HasAction(int64_t experiment_id, LogPolicyAction action);
  TrialMatches& MatchesOf(int64_t trial_id);

  Store& store_;
  ExperimentSettings& settings_;
  std::map<int64_t, std::vector<Compiled>> compiled_;  // by experiment
  std::map<int64_t, TrialMatches> trials_;             // loaded from the store on first use
};

}  // namespace ring
