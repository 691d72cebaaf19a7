#pragma once
// One bracket of adaptive_asha: asynchronous successive halving (Li et al.,
// "A System for Massively Parallel Hyperparameter Tuning"), with Determined's
// rules for promotions and for closing trials out. Owned by
// AdaptiveAshaSearch, which routes each trial's events to its bracket.
//
// Rung k keeps the results reported at its length, sorted best first.
// When a result arrives at rung k (n results before it), the top
// floor((n + 1) / d) of the rung deserve promotion: the new trial is promoted
// at once if it lands among them; otherwise, if that number grew, the trial at
// the old boundary is promoted unless it already was (it had been waiting).
// A trial that can no longer train (it exited early or was closed) counts as
// the worst result wherever it is promoted to. When nothing was promoted a
// new trial starts, until the bracket has made max_trials; once rung 0 holds
// max_trials results, rungs with no trial still training close their
// unpromoted trials, from the bottom up.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/searcher/asha_plan.h"
#include "common/searcher/search_method.h"

namespace ring::search {

class AshaBracket {
 public:
  using Space = std::map<std::string, Hyperparameter>;

  AshaBracket(AshaBracketPlan plan, double divisor, bool smaller_is_better,
              std::shared_ptr<const Space> space);

  // Creates the bracket's first trials (its share of max_concurrent_trials).
  void Start(SearchContext& ctx);
  void ValidationCompleted(SearchContext& ctx, RequestId id, double metric);
  // Errored or canceled before the bracket closed it.
  void ExitedEarly(SearchContext& ctx, RequestId id);
  // Forgets a trial whose hyperparameters were invalid; `replace` starts another.
  void RemoveInvalid(SearchContext& ctx, RequestId id, bool replace);
  // Makes no more trials; finishes with those it has.
  void GiveUp(SearchContext& ctx);

  bool Has(RequestId id) const { return rung_of_.count(id) > 0; }
  // Made all its trials and none is training.
  bool Done() const;
  // Expected batches: about max_trials / d^k trials reach rung k.
  double PlannedBatches() const;

  nlohmann::json Snapshot() const;
  void Restore(const nlohmann::json& state, const TrialTable& trials);

 private:
  struct Result {
    RequestId id = 0;
    double metric = 0;  // smaller is better here (negated for larger-is-better metrics)
    bool promoted = false;
  };
  struct Rung {
    std::vector<Result> results;  // sorted by metric; ties keep arrival order
    int64_t training = 0;         // trials of this rung that have not reported yet
    std::optional<RequestId> Insert(RequestId id, double metric, double divisor);
    bool Reported(RequestId id) const;
  };

  // Records a result at the trial's rung and follows the promotions it causes.
  void Report(SearchContext& ctx, RequestId id, double metric);
  void NewTrial(SearchContext& ctx);
  void CloseOutRungs(SearchContext& ctx);
  bool CanTrain(const SearchContext& ctx, RequestId id) const;
  int64_t made() const { return static_cast<int64_t>(rung_of_.size()); }

  AshaBracketPlan plan_;
  double divisor_;
  bool smaller_is_better_;
  std::shared_ptr<const Space> space_;
  int64_t max_trials_;                // plan_.max_trials, or fewer after GiveUp
  std::map<RequestId, int> rung_of_;  // every trial of the bracket -> its current rung
  std::set<RequestId> exited_;        // trials that exited early
  std::vector<Rung> rungs_;
};

}  // namespace ring::search
