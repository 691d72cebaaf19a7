#pragma once
// The `single` searcher: one trial with the space's default values
// (DefaultHparams, not sampled) and the experiment seed as its seed, trained
// to max_length, closed once it validates.
#include "common/searcher/search_method.h"

namespace ring::search {

class SingleSearch : public SearchMethod {
 public:
  SingleSearch(const SearcherConfig& config, const std::map<std::string, Hyperparameter>& space,
               uint64_t seed);

  void Start(SearchContext& ctx) override;
  void ValidationCompleted(SearchContext& ctx, RequestId id, double metric) override;
  void TrialClosed(SearchContext&, RequestId) override {}
  void TrialExitedEarly(SearchContext&, RequestId, ExitReason) override {}

  bool Finished() const override { return created_; }
  double PlannedTrials() const override { return 1; }
  double PlannedBatches() const override { return static_cast<double>(max_length_); }

  nlohmann::json Snapshot() const override;
  void Restore(const nlohmann::json& state, const TrialTable& trials) override;

 private:
  int64_t max_length_;
  nlohmann::json hparams_;
  int64_t seed_;
  bool created_ = false;
};

}  // namespace ring::search
