#pragma once
// The `grid` searcher: one trial per grid point (hparam_grid.h), in grid
// order, at most max_concurrent_trials at a time (0 = all at once), each
// trained to max_length and closed once it validates. max_trials is ignored:
// the grid decides the number of trials. A point whose trial reports invalid
// hyperparameters is dropped, since a grid point cannot be drawn again.
#include <vector>

#include "common/searcher/search_method.h"

namespace ring::search {

class GridSearch : public SearchMethod {
 public:
  // `space` must pass CheckSearcherConfig for the grid (counts, size).
  GridSearch(const SearcherConfig& config, const std::map<std::string, Hyperparameter>& space);

  void Start(SearchContext& ctx) override { Fill(ctx); }
  void ValidationCompleted(SearchContext& ctx, RequestId id, double metric) override;
  void TrialClosed(SearchContext& ctx, RequestId) override { Fill(ctx); }
  void TrialExitedEarly(SearchContext& ctx, RequestId, ExitReason reason) override;

  bool Finished() const override { return next_ >= static_cast<int64_t>(points_.size()); }
  double PlannedTrials() const override { return static_cast<double>(points_.size()); }
  double PlannedBatches() const override;

  nlohmann::json Snapshot() const override;
  void Restore(const nlohmann::json& state, const TrialTable& trials) override;

 private:
  void Fill(SearchContext& ctx);

  std::vector<nlohmann::json> points_;
  int64_t max_concurrent_;
  int64_t max_length_;
  int64_t next_ = 0;     // the next point to start
  int64_t dropped_ = 0;  // points whose trial had invalid hyperparameters
};

}  // namespace ring::search
