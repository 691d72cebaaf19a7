#include "common/searcher/single_search.h"

#include "common/searcher/snapshot_json.h"

namespace ring::search {

SingleSearch::SingleSearch(const SearcherConfig& config, const std::map<std::string, Hyperparameter>& space,
                           uint64_t seed)
    : max_length_(config.max_length_batches),
      hparams_(DefaultHparams(space)),
      seed_(static_cast<int64_t>(seed & 0x7fffffffffffffffULL)) {}

void SingleSearch::Start(SearchContext& ctx) {
  if (created_) return;
  created_ = true;
  ctx.TrainTo(ctx.Create(hparams_, seed_), max_length_);
}

void SingleSearch::ValidationCompleted(SearchContext& ctx, RequestId id, double) {
  ctx.Close(id);
}

nlohmann::json SingleSearch::Snapshot() const {
  return {{"created", created_}, {"seed", seed_}};
}

void SingleSearch::Restore(const nlohmann::json& state, const TrialTable& trials) {
  created_ = BoolField(state, "created");
  seed_ = IntField(state, "seed", 0);
  if (trials.entries().size() != (created_ ? 1u : 0u)) throw SnapshotError("single has at most one trial");
}

}  // namespace ring::search
