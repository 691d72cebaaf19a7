#pragma once
// The `adaptive_asha` searcher: the brackets of PlanAdaptiveAsha run side by
// side (like Determined's tournament search), each an AshaBracket with its
// share of max_trials and max_concurrent_trials. Events go to the bracket of
// their trial; the search is finished when every bracket is. A trial with
// invalid hyperparameters leaves its bracket and another starts in its
// place; after kInvalidHparamsFactor x max_trials of them the brackets stop
// making trials, finish with what they have, and the search ends as a failure.
#include <memory>
#include <vector>

#include "common/searcher/asha_bracket.h"
#include "common/searcher/search_method.h"

namespace ring::search {

class AdaptiveAshaSearch : public SearchMethod {
 public:
  AdaptiveAshaSearch(const SearcherConfig& config, const std::map<std::string, Hyperparameter>& space);

  void Start(SearchContext& ctx) override;
  void ValidationCompleted(SearchContext& ctx, RequestId id, double metric) override;
  void TrialClosed(SearchContext&, RequestId) override {}
  void TrialExitedEarly(SearchContext& ctx, RequestId id, ExitReason reason) override;

  bool Finished() const override;
  double PlannedBatches() const override;
  int Bracket(RequestId id) const override;

  nlohmann::json Snapshot() const override;
  void Restore(const nlohmann::json& state, const TrialTable& trials) override;

 private:
  AshaBracket* Find(RequestId id);

  int64_t max_trials_;
  std::vector<AshaBracket> brackets_;
  int64_t invalid_ = 0;  // trials that reported invalid hyperparameters
  bool gave_up_ = false;
};

}  // namespace ring::search
