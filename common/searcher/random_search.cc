#include "common/searcher/random_search.h"

#include "common/searcher/hparam_sampler.h"
#include "common/searcher/snapshot_json.h"

namespace ring::search {

RandomSearch::RandomSearch(const SearcherConfig& config, const std::map<std::string, Hyperparameter>& space)
    : space_(space),
      max_trials_(config.max_trials),
      max_concurrent_(config.max_concurrent_trials),
      max_length_(config.max_length_batches) {}

void RandomSearch::Fill(SearchContext& ctx) {
  while (!Finished() && (max_concurrent_ == 0 || ctx.trials().live() < max_concurrent_)) {
    auto hparams = SampleHparams(space_, ctx.rng());
    const int64_t seed = ctx.DrawTrialSeed();
    ctx.TrainTo(ctx.Create(std::move(hparams), seed), max_length_);
    ++created_;
  }
}

void RandomSearch::ValidationCompleted(SearchContext& ctx, RequestId id, double) {
  ctx.Close(id);
}

void RandomSearch::TrialExitedEarly(SearchContext& ctx, RequestId, ExitReason reason) {
  if (reason == ExitReason::kInvalidHparams) ++invalid_;
  if (!gave_up_ && invalid_ >= kInvalidHparamsFactor * max_trials_) {
    gave_up_ = true;  // the space may hold no valid point at all
    ctx.Fail();
  }
  Fill(ctx);
}

double RandomSearch::PlannedBatches() const {
  return static_cast<double>(max_trials_) * static_cast<double>(max_length_);
}

nlohmann::json RandomSearch::Snapshot() const {
  return {{"created", created_}, {"invalid", invalid_}, {"gave_up", gave_up_}};
}

void RandomSearch::Restore(const nlohmann::json& state, const TrialTable& trials) {
  created_ = IntField(state, "created", 0);
  invalid_ = IntField(state, "invalid", 0, created_);
  gave_up_ = BoolField(state, "gave_up");
  if (created_ != static_cast<int64_t>(trials.entries().size()))
    throw SnapshotError("random created " + std::to_string(created_) + " trials but the table lists " +
                        std::to_string(trials.entries().size()));
  if (invalid_ != trials.ended(TrialEnd::kInvalidHparams))
    throw SnapshotError("random's invalid count does not match its trials");
}

}  // namespace ring::search
