#include "common/searcher/asha_bracket.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

#include "common/searcher/hparam_sampler.h"
#include "common/searcher/snapshot_json.h"

namespace ring::search {
namespace {

// The result of a trial that can no longer train.
constexpr double kWorst = DBL_MAX;

}  // namespace

std::optional<RequestId> AshaBracket::Rung::Insert(RequestId id, double metric, double divisor) {
  const auto n = static_cast<double>(results.size());
  const auto promotable_before = static_cast<size_t>(n / divisor);
  const auto promotable = static_cast<size_t>((n + 1) / divisor);
  auto at = std::upper_bound(results.begin(), results.end(), metric,
                             [](double m, const Result& r) { return m < r.metric; });
  const bool now = static_cast<size_t>(at - results.begin()) < promotable;
  results.insert(at, Result{id, metric, now});
  if (now) return id;
  if (promotable != promotable_before && !results[promotable_before].promoted) {
    results[promotable_before].promoted = true;  // it had been waiting for this
    return results[promotable_before].id;
  }
  return std::nullopt;
}

bool AshaBracket::Rung::Reported(RequestId id) const {
  return std::any_of(results.begin(), results.end(), [id](const Result& r) { return r.id == id; });
}

AshaBracket::AshaBracket(AshaBracketPlan plan, double divisor, bool smaller_is_better,
                         std::shared_ptr<const Space> space)
    : plan_(std::move(plan)),
      divisor_(divisor),
      smaller_is_better_(smaller_is_better),
      space_(std::move(space)),
      max_trials_(plan_.max_trials),
      rungs_(static_cast<size_t>(plan_.rungs)) {}

void AshaBracket::Start(SearchContext& ctx) {
  for (int64_t i = 0; i < std::min(plan_.max_concurrent_trials, max_trials_); ++i) NewTrial(ctx);
}

void AshaBracket::NewTrial(SearchContext& ctx) {
  auto hparams = SampleHparams(*space_, ctx.rng());
  const int64_t seed = ctx.DrawTrialSeed();
  const RequestId id = ctx.Create(std::move(hparams), seed);
  rung_of_[id] = 0;
  ++rungs_[0].training;
  ctx.TrainTo(id, plan_.lengths[0]);
}

bool AshaBracket::CanTrain(const SearchContext& ctx, RequestId id) const {
  const TrialEntry* t = ctx.trials().Find(id);
  return !exited_.count(id) && t && !t->closed;
}

void AshaBracket::ValidationCompleted(SearchContext& ctx, RequestId id, double metric) {
  if (!smaller_is_better_) metric = -metric;
  if (std::isnan(metric)) metric = kWorst;
  Report(ctx, id, std::clamp(metric, -DBL_MAX, DBL_MAX));  // JSON has no infinities
}

void AshaBracket::Report(SearchContext& ctx, RequestId id, double metric) {
  bool trained = false;
  // A promoted trial that cannot train reports the worst result at its new
  // rung at once, which may promote another: hence a loop.
  for (;;) {
    const int k = rung_of_.at(id);
    Rung& rung = rungs_[static_cast<size_t>(k)];
    --rung.training;
    if (k == plan_.rungs - 1) {
      ctx.Close(id);  // done with the top rung; ignored for a trial that ended
      break;
    }
    const auto promoted = rung.Insert(id, metric, divisor_);
    if (!promoted) break;
    rung_of_[*promoted] = k + 1;
    ++rungs_[static_cast<size_t>(k) + 1].training;
    if (CanTrain(ctx, *promoted)) {
      ctx.TrainTo(*promoted, plan_.lengths[static_cast<size_t>(k) + 1]);
      trained = true;
      break;
    }
    id = *promoted;
    metric = kWorst;
  }
  if (!trained && made() < max_trials_) NewTrial(ctx);
  if (static_cast<int64_t>(rungs_[0].results.size()) >= max_trials_) CloseOutRungs(ctx);
}

void AshaBracket::CloseOutRungs(SearchContext& ctx) {
  for (const Rung& rung : rungs_) {
    if (rung.training > 0) break;
    for (const Result& r : rung.results)
      if (!r.promoted) ctx.Close(r.id);  // ignored for trials already closed or ended
  }
}

void AshaBracket::ExitedEarly(SearchContext& ctx, RequestId id) {
  exited_.insert(id);
  // A trial waiting for a promotion keeps its result; one that was training
  // reports the worst.
  if (!rungs_[static_cast<size_t>(rung_of_.at(id))].Reported(id)) Report(ctx, id, kWorst);
}

void AshaBracket::RemoveInvalid(SearchContext& ctx, RequestId id, bool replace) {
  Rung& current = rungs_[static_cast<size_t>(rung_of_.at(id))];
  if (!current.Reported(id)) --current.training;
  for (Rung& rung : rungs_) std::erase_if(rung.results, [id](const Result& r) { return r.id == id; });
  rung_of_.erase(id);
  exited_.erase(id);
  if (replace && made() < max_trials_) NewTrial(ctx);
  if (static_cast<int64_t>(rungs_[0].results.size()) >= max_trials_) CloseOutRungs(ctx);
}

void AshaBracket::GiveUp(SearchContext& ctx) {
  max_trials_ = made();
  if (static_cast<int64_t>(rungs_[0].results.size()) >= max_trials_) CloseOutRungs(ctx);
}

bool AshaBracket::Done() const {
  if (made() < max_trials_) return false;
  return std::all_of(rungs_.begin(), rungs_.end(), [](const Rung& r) { return r.training == 0; });
}

double AshaBracket::PlannedBatches() const {
  if (max_trials_ == 0) return 0;
  double total = 0;
  double scale = 1;  // d^k
  int64_t previous = 0;
  for (int64_t length : plan_.lengths) {
    const double trials = std::max(std::floor(static_cast<double>(max_trials_) / scale), 1.0);
    total += trials * static_cast<double>(length - previous);
    previous = length;
    scale *= divisor_;
  }
  return total;
}

}  // namespace ring::search
