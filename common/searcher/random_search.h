#pragma once
// The `random` searcher: max_trials trials with hyperparameters drawn from
// the space (hparam_sampler.h) and seeds from the search's generator, at most
// max_concurrent_trials at a time (0 = all at once). Each trains to
// max_length and is closed once it validates; when a trial ends (closed,
// errored or canceled) the next one starts. A trial that reports invalid
// hyperparameters is replaced and does not count toward max_trials; after
// kInvalidHparamsFactor x max_trials such trials the search stops replacing
// them and ends as a failure.
#include "common/searcher/search_method.h"

namespace ring::search {

// Invalid-hyperparameter trials a random or adaptive_asha search replaces,
// per trial of max_trials, before it gives up.
inline constexpr int64_t kInvalidHparamsFactor = 10;

class RandomSearch : public SearchMethod {
 public:
  RandomSearch(const SearcherConfig& config, const std::map<std::string, Hyperparameter>& space);

  void Start(SearchContext& ctx) override { Fill(ctx); }
  void ValidationCompleted(SearchContext& ctx, RequestId id, double metric) override;
  void TrialClosed(SearchContext& ctx, RequestId) override { Fill(ctx); }
  void TrialExitedEarly(SearchContext& ctx, RequestId id, ExitReason reason) override;

  bool Finished() const override { return gave_up_ || created_ - invalid_ >= max_trials_; }
  double PlannedTrials() const override { return static_cast<double>(max_trials_); }
  double PlannedBatches() const override;

  nlohmann::json Snapshot() const override;
  void Restore(const nlohmann::json& state, const TrialTable& trials) override;

 private:
  // Creates trials until max_trials or the concurrency limit is reached.
  void Fill(SearchContext& ctx);

  std::map<std::string, Hyperparameter> space_;
  int64_t max_trials_;
  int64_t max_concurrent_;
  int64_t max_length_;
  int64_t created_ = 0;  // trials made, invalid ones included
  int64_t invalid_ = 0;  // trials that reported invalid hyperparameters
  bool gave_up_ = false;
};

}  // namespace ring::search
