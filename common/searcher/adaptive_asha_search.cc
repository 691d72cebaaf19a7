#include "common/searcher/adaptive_asha_search.h"

#include <algorithm>

#include "common/searcher/random_search.h"
#include "common/searcher/snapshot_json.h"

namespace ring::search {

AdaptiveAshaSearch::AdaptiveAshaSearch(const SearcherConfig& config,
                                       const std::map<std::string, Hyperparameter>& space)
    : max_trials_(config.max_trials) {
  auto shared = std::make_shared<const AshaBracket::Space>(space);
  for (auto& plan : PlanAdaptiveAsha(config))
    brackets_.emplace_back(std::move(plan), config.divisor, config.smaller_is_better, shared);
}

AshaBracket* AdaptiveAshaSearch::Find(RequestId id) {
  for (auto& b : brackets_)
    if (b.Has(id)) return &b;
  return nullptr;
}

void AdaptiveAshaSearch::Start(SearchContext& ctx) {
  for (auto& b : brackets_) b.Start(ctx);
}

void AdaptiveAshaSearch::ValidationCompleted(SearchContext& ctx, RequestId id, double metric) {
  if (AshaBracket* b = Find(id)) b->ValidationCompleted(ctx, id, metric);
}

void AdaptiveAshaSearch::TrialExitedEarly(SearchContext& ctx, RequestId id, ExitReason reason) {
  AshaBracket* b = Find(id);
  if (!b) return;
  if (reason != ExitReason::kInvalidHparams) {
    b->ExitedEarly(ctx, id);
    return;
  }
  ++invalid_;
  if (gave_up_ || invalid_ < kInvalidHparamsFactor * max_trials_) {
    b->RemoveInvalid(ctx, id, !gave_up_);
    return;
  }
  gave_up_ = true;
  ctx.Fail();
  b->RemoveInvalid(ctx, id, false);
  for (auto& bracket : brackets_) bracket.GiveUp(ctx);
}

bool AdaptiveAshaSearch::Finished() const {
  return std::all_of(brackets_.begin(), brackets_.end(), [](const AshaBracket& b) { return b.Done(); });
}

double AdaptiveAshaSearch::PlannedBatches() const {
  double total = 0;
  for (const auto& b : brackets_) total += b.PlannedBatches();
  return total;
}

int AdaptiveAshaSearch::Bracket(RequestId id) const {
  for (size_t i = 0; i < brackets_.size(); ++i)
    if (brackets_[i].Has(id)) return static_cast<int>(i);
  return 0;
}

nlohmann::json AdaptiveAshaSearch::Snapshot() const {
  auto brackets = nlohmann::json::array();
  for (const auto& b : brackets_) brackets.push_back(b.Snapshot());
  return {{"invalid", invalid_}, {"gave_up", gave_up_}, {"brackets", brackets}};
}

void AdaptiveAshaSearch::Restore(const nlohmann::json& state, const TrialTable& trials) {
  invalid_ = IntField(state, "invalid", 0);
  gave_up_ = BoolField(state, "gave_up");
  if (invalid_ != trials.ended(TrialEnd::kInvalidHparams))
    throw SnapshotError("adaptive_asha's invalid count does not match its trials");
  const auto& brackets = ArrayOf(Field(state, "brackets"), "brackets");
  if (brackets.size() != brackets_.size())
    throw SnapshotError("adaptive_asha must have " + std::to_string(brackets_.size()) + " brackets");
  for (size_t i = 0; i < brackets_.size(); ++i) brackets_[i].Restore(brackets[i], trials);
  // Every trial but the invalid ones belongs to exactly one bracket.
  for (const auto& [id, t] : trials.entries()) {
    const auto owners = std::count_if(brackets_.begin(), brackets_.end(),
                                      [id = id](const AshaBracket& b) { return b.Has(id); });
    if (owners != (t.end == TrialEnd::kInvalidHparams ? 0 : 1))
      throw SnapshotError("trial " + std::to_string(id) + " must belong to exactly one bracket");
  }
}

}  // namespace ring::search
