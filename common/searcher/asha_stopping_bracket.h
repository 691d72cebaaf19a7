#pragma once
// One bracket of adaptive_asha under the trial-driven contract: ASHA that
// stops trials instead of promoting them (Determined 0.38's rule). Trials
// train on their own and report validations carrying the time metric; rung
// k sits at plan.lengths[k] time units. A report at or past a rung's time
// ranks the trial there (it may pass several rungs in one report): when it
// is not among the best max(floor(n / divisor), 1) of the n results at that
// rung, or the rung is the top one, the bracket closes the trial (the master
// asks it to stop) and starts another while it has made fewer than its
// max_trials. A trial that ends on its own, or errors, also makes room for
// another; one that errors counts as the worst result at its rung. Owned by
// TimeAshaSearch, which routes each trial's events to its bracket.
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "common/searcher/asha_plan.h"
#include "common/searcher/search_method.h"

namespace ring::search {

class AshaStoppingBracket {
 public:
  using Space = std::map<std::string, Hyperparameter>;

  AshaStoppingBracket(AshaBracketPlan plan, double divisor, bool smaller_is_better,
                      std::shared_ptr<const Space> space);

  // Creates the bracket's first trials (its share of max_concurrent_trials).
  void Start(SearchContext& ctx);
  void Reported(SearchContext& ctx, RequestId id, double time, double metric);
  // The trial ended: `stopped` when the bracket had closed it; `failed` when
  // it errored or was canceled before.
  void Ended(SearchContext& ctx, RequestId id, bool stopped, bool failed);
  // Forgets a trial whose hyperparameters were invalid; `replace` starts another.
  void RemoveInvalid(SearchContext& ctx, RequestId id, bool replace);
  // Makes no more trials.
  void GiveUp() { max_trials_ = made(); }

  bool Has(RequestId id) const { return rung_of_.count(id) > 0; }
  // Made all its trials and every one has ended.
  bool Done() const { return made() >= max_trials_ && ended_.size() == rung_of_.size(); }
  int64_t max_trials() const { return max_trials_; }

  nlohmann::json Snapshot() const;
  void Restore(const nlohmann::json& state, const TrialTable& trials);

 private:
  struct Result {
    RequestId id = 0;
    double metric = 0;  // smaller is better here (negated for larger-is-better metrics)
  };
  // Inserts in order (ties keep arrival order); returns the position.
  static size_t Insert(std::vector<Result>& rung, RequestId id, double metric);
  void NewTrial(SearchContext& ctx);
  void Replace(SearchContext& ctx);
  int64_t made() const { return static_cast<int64_t>(rung_of_.size()); }

  AshaBracketPlan plan_;
  double divisor_;
  bool smaller_is_better_;
  std::shared_ptr<const Space> space_;
  int64_t max_trials_;                // plan_.max_trials, or fewer after GiveUp
  std::map<RequestId, int> rung_of_;  // every trial -> the rung it reports to next
  std::set<RequestId> ended_;         // trials of the bracket that ended
  std::vector<std::vector<Result>> rungs_;
};

}  // namespace ring::search
