#include "common/searcher/grid_search.h"

#include "common/searcher/hparam_grid.h"
#include "common/searcher/snapshot_json.h"

namespace ring::search {

GridSearch::GridSearch(const SearcherConfig& config, const std::map<std::string, Hyperparameter>& space)
    : points_(GridPoints(space)),
      max_concurrent_(config.max_concurrent_trials),
      max_length_(config.max_length_batches) {}

void GridSearch::Fill(SearchContext& ctx) {
  while (!Finished() && (max_concurrent_ == 0 || ctx.trials().live() < max_concurrent_)) {
    const int64_t seed = ctx.DrawTrialSeed();
    ctx.TrainTo(ctx.Create(points_[static_cast<size_t>(next_++)], seed), max_length_);
  }
}

void GridSearch::ValidationCompleted(SearchContext& ctx, RequestId id, double) {
  ctx.Close(id);
}

void GridSearch::TrialExitedEarly(SearchContext& ctx, RequestId, ExitReason reason) {
  if (reason == ExitReason::kInvalidHparams) ++dropped_;
  Fill(ctx);
}

double GridSearch::PlannedBatches() const {
  return static_cast<double>(static_cast<int64_t>(points_.size()) - dropped_) *
         static_cast<double>(max_length_);
}

nlohmann::json GridSearch::Snapshot() const {
  return {{"next", next_}, {"dropped", dropped_}};
}

void GridSearch::Restore(const nlohmann::json& state, const TrialTable& trials) {
  next_ = IntField(state, "next", 0, static_cast<int64_t>(points_.size()));
  dropped_ = IntField(state, "dropped", 0, next_);
  if (next_ != static_cast<int64_t>(trials.entries().size()))
    throw SnapshotError("grid started " + std::to_string(next_) + " points but the table lists " +
                        std::to_string(trials.entries().size()) + " trials");
  if (dropped_ != trials.ended(TrialEnd::kInvalidHparams))
    throw SnapshotError("grid's dropped count does not match its trials");
}

}  // namespace ring::search
