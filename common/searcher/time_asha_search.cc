#include "common/searcher/time_asha_search.h"

#include <algorithm>

#include "common/searcher/random_search.h"
#include "common/searcher/snapshot_json.h"

namespace ring::search {

TimeAshaSearch::TimeAshaSearch(const SearcherConfig& config,
                               const std::map<std::string, Hyperparameter>& space)
    : max_trials_(config.max_trials) {
  auto shared = std::make_shared<const AshaStoppingBracket::Space>(space);
  for (auto& plan : PlanAdaptiveAsha(config))
    brackets_.emplace_back(std::move(plan), config.divisor, config.smaller_is_better, shared);
}

AshaStoppingBracket* TimeAshaSearch::Find(RequestId id) {
  for (auto& b : brackets_)
    if (b.Has(id)) return &b;
  return nullptr;
}

void TimeAshaSearch::Start(SearchContext& ctx) {
  for (auto& b : brackets_) b.Start(ctx);
}

void TimeAshaSearch::MetricsReported(SearchContext& ctx, RequestId id, double time, double metric) {
  if (AshaStoppingBracket* b = Find(id)) b->Reported(ctx, id, time, metric);
}

void TimeAshaSearch::TrialClosed(SearchContext& ctx, RequestId id) {
  if (AshaStoppingBracket* b = Find(id)) b->Ended(ctx, id, true, false);
}

void TimeAshaSearch::TrialFinished(SearchContext& ctx, RequestId id) {
  if (AshaStoppingBracket* b = Find(id)) b->Ended(ctx, id, false, false);
}

void TimeAshaSearch::TrialExitedEarly(SearchContext& ctx, RequestId id, ExitReason reason) {
  AshaStoppingBracket* b = Find(id);
  if (!b) return;
  if (reason != ExitReason::kInvalidHparams) {
    b->Ended(ctx, id, false, true);
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
  for (auto& bracket : brackets_) bracket.GiveUp();
}

bool TimeAshaSearch::Finished() const {
  return std::all_of(brackets_.begin(), brackets_.end(),
                     [](const AshaStoppingBracket& b) { return b.Done(); });
}

int TimeAshaSearch::Bracket(RequestId id) const {
  for (size_t i = 0; i < brackets_.size(); ++i)
    if (brackets_[i].Has(id)) return static_cast<int>(i);
  return 0;
}

nlohmann::json TimeAshaSearch::Snapshot() const {
  auto brackets = nlohmann::json::array();
  for (const auto& b : brackets_) brackets.push_back(b.Snapshot());
  return {{"invalid", invalid_}, {"gave_up", gave_up_}, {"brackets", brackets}};
}

void TimeAshaSearch::Restore(const nlohmann::json& state, const TrialTable& trials) {
  invalid_ = IntField(state, "invalid", 0);
  gave_up_ = BoolField(state, "gave_up");
  if (invalid_ != trials.ended(TrialEnd::kInvalidHparams))
    throw SnapshotError("adaptive_asha's invalid count does not match its trials");
  const auto& brackets = ArrayOf(Field(state, "brackets"), "brackets");
  if (brackets.size() != brackets_.size())
    throw SnapshotError("adaptive_asha must have " + std::to_string(brackets_.size()) + " brackets");
  for (size_t i = 0; i < brackets_.size(); ++i) brackets_[i].Restore(brackets[i], trials);
  for (const auto& [id, t] : trials.entries()) {
    const auto owners = std::count_if(brackets_.begin(), brackets_.end(),
                                      [id = id](const AshaStoppingBracket& b) { return b.Has(id); });
    if (owners != (t.end == TrialEnd::kInvalidHparams ? 0 : 1))
      throw SnapshotError("trial " + std::to_string(id) + " must belong to exactly one bracket");
  }
}

}  // namespace ring::search
