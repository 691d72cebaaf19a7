#include "common/searcher/asha_stopping_bracket.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

#include "common/searcher/hparam_sampler.h"
#include "common/searcher/snapshot_json.h"

namespace ring::search {
namespace {

// The result of a trial that errored before reporting at its rung.
constexpr double kWorstResult = DBL_MAX;

}  // namespace

AshaStoppingBracket::AshaStoppingBracket(AshaBracketPlan plan, double divisor, bool smaller_is_better,
                                         std::shared_ptr<const Space> space)
    : plan_(std::move(plan)),
      divisor_(divisor),
      smaller_is_better_(smaller_is_better),
      space_(std::move(space)),
      max_trials_(plan_.max_trials),
      rungs_(static_cast<size_t>(plan_.rungs)) {}

size_t AshaStoppingBracket::Insert(std::vector<Result>& rung, RequestId id, double metric) {
  auto at = std::upper_bound(rung.begin(), rung.end(), metric,
                             [](double m, const Result& r) { return m < r.metric; });
  const auto index = static_cast<size_t>(at - rung.begin());
  rung.insert(at, Result{id, metric});
  return index;
}

void AshaStoppingBracket::Start(SearchContext& ctx) {
  for (int64_t i = 0; i < std::min(plan_.max_concurrent_trials, max_trials_); ++i) NewTrial(ctx);
}

void AshaStoppingBracket::NewTrial(SearchContext& ctx) {
  auto hparams = SampleHparams(*space_, ctx.rng());
  const int64_t seed = ctx.DrawTrialSeed();
  rung_of_[ctx.Create(std::move(hparams), seed)] = 0;
}

void AshaStoppingBracket::Replace(SearchContext& ctx) {
  if (made() < max_trials_) NewTrial(ctx);
}

void AshaStoppingBracket::Reported(SearchContext& ctx, RequestId id, double time, double metric) {
  if (!smaller_is_better_) metric = -metric;
  if (std::isnan(metric)) metric = kWorstResult;
  metric = std::clamp(metric, -DBL_MAX, DBL_MAX);  // JSON has no infinities
  int& k = rung_of_.at(id);
  // Validations come when the trial likes: one may pass several rungs.
  for (; k < plan_.rungs; ++k) {
    if (time < static_cast<double>(plan_.lengths[static_cast<size_t>(k)])) return;
    auto& rung = rungs_[static_cast<size_t>(k)];
    const size_t index = Insert(rung, id, metric);
    const auto keep = std::max<size_t>(static_cast<size_t>(static_cast<double>(rung.size()) / divisor_), 1);
    if (k == plan_.rungs - 1 || index >= keep) {
      ctx.Close(id);
      Replace(ctx);
      return;
    }
  }
}

void AshaStoppingBracket::Ended(SearchContext& ctx, RequestId id, bool stopped, bool failed) {
  if (!ended_.insert(id).second) return;
  if (stopped) return;  // its replacement came with the stop
  const int k = rung_of_.at(id);
  if (failed && k < plan_.rungs) {
    auto& rung = rungs_[static_cast<size_t>(k)];
    if (std::none_of(rung.begin(), rung.end(), [id](const Result& r) { return r.id == id; }))
      Insert(rung, id, kWorstResult);
  }
  Replace(ctx);
}

void AshaStoppingBracket::RemoveInvalid(SearchContext& ctx, RequestId id, bool replace) {
  for (auto& rung : rungs_) std::erase_if(rung, [id](const Result& r) { return r.id == id; });
  rung_of_.erase(id);
  ended_.erase(id);
  if (replace) Replace(ctx);
}

nlohmann::json AshaStoppingBracket::Snapshot() const {
  auto trials = nlohmann::json::array();
  for (const auto& [id, rung] : rung_of_) trials.push_back({id, rung});
  auto rungs = nlohmann::json::array();
  for (const auto& rung : rungs_) {
    auto results = nlohmann::json::array();
    for (const Result& r : rung) results.push_back({r.id, r.metric});
    rungs.push_back(results);
  }
  return {{"max_trials", max_trials_}, {"trials", trials}, {"rungs", rungs}};
}

void AshaStoppingBracket::Restore(const nlohmann::json& state, const TrialTable& table) {
  max_trials_ = IntField(state, "max_trials", 0, plan_.max_trials);
  rung_of_.clear();
  ended_.clear();
  for (const auto& pair : ArrayOf(Field(state, "trials"), "trials")) {
    if (!pair.is_array() || pair.size() != 2) throw SnapshotError("bracket trials must be [id, rung] pairs");
    const RequestId id = IntOf(pair[0], "trial id", 1);
    // plan_.rungs: the trial passed the top rung (it was stopped there).
    const auto rung = static_cast<int>(IntOf(pair[1], "rung", 0, plan_.rungs));
    const TrialEntry* t = table.Find(id);
    if (!t) throw SnapshotError("bracket trial " + std::to_string(id) + " is not a known trial");
    if (!rung_of_.emplace(id, rung).second) throw SnapshotError("bracket lists a trial twice");
    if (t->ended()) ended_.insert(id);
  }
  if (made() > max_trials_) throw SnapshotError("bracket has more trials than its max_trials");
  const auto& rungs = ArrayOf(Field(state, "rungs"), "rungs");
  if (rungs.size() != rungs_.size())
    throw SnapshotError("bracket must have " + std::to_string(plan_.rungs) + " rungs");
  for (size_t k = 0; k < rungs_.size(); ++k) {
    auto& rung = rungs_[k];
    rung.clear();
    for (const auto& item : ArrayOf(rungs[k], "rung results")) {
      if (!item.is_array() || item.size() != 2) throw SnapshotError("rung results must be [id, metric]");
      Result r{IntOf(item[0], "result id", 1), DoubleOf(item[1], "result metric")};
      auto at = rung_of_.find(r.id);
      if (at == rung_of_.end() || static_cast<size_t>(at->second) < k ||
          std::any_of(rung.begin(), rung.end(), [&r](const Result& x) { return x.id == r.id; }))
        throw SnapshotError("rung " + std::to_string(k) + " has a result that cannot be there");
      if (!rung.empty() && rung.back().metric > r.metric)
        throw SnapshotError("rung " + std::to_string(k) + " results are not sorted");
      rung.push_back(r);
    }
  }
}

}  // namespace ring::search
