#include "master/maintenance/checkpoint_gc.h"

#include <algorithm>
#include <map>
#include <set>

namespace ring {
namespace {

// Best first; checkpoints without a metric come last.
bool Better(const GcCandidate* a, const GcCandidate* b, bool smaller) {
  if (a->metric.has_value() != b->metric.has_value()) return a->metric.has_value();
  if (a->metric && *a->metric != *b->metric)
    return smaller ? *a->metric < *b->metric : *a->metric > *b->metric;
  return a->batches > b->batches;
}

void KeepFirst(std::vector<const GcCandidate*> list, int64_t n, std::set<std::string>& keep) {
  for (int64_t i = 0; i < n && i < static_cast<int64_t>(list.size()); ++i) keep.insert(list[i]->uuid);
}

}  // namespace

std::vector<std::string> CheckpointsToDelete(const std::vector<GcCandidate>& candidates,
                                             const GcPolicy& policy) {
  std::set<std::string> keep;
  std::map<int64_t, std::vector<const GcCandidate*>> by_trial;
  std::vector<const GcCandidate*> all;
  for (const auto& c : candidates) {
    by_trial[c.trial_id].push_back(&c);
    all.push_back(&c);
    if ((!c.trial_ended && c.latest_of_trial) || c.warm_start_source || c.model_version) keep.insert(c.uuid);
  }
  const auto better = [&](const GcCandidate* a, const GcCandidate* b) {
    return Better(a, b, policy.smaller_is_better);
  };
  for (auto& [trial, list] : by_trial) {
    const bool ended = list.front()->trial_ended;
    if (!ended) {  // a running trial keeps everything until it ends
      for (const auto* c : list) keep.insert(c->uuid);
      continue;
    }
    auto latest = list;
    std::sort(latest.begin(), latest.end(),
              [](const GcCandidate* a, const GcCandidate* b) { return a->batches > b->batches; });
    KeepFirst(latest, policy.save_trial_latest, keep);
    auto best = list;
    std::sort(best.begin(), best.end(), better);
    KeepFirst(best, policy.save_trial_best, keep);
  }
  std::sort(all.begin(), all.end(), better);
  KeepFirst(all, policy.save_experiment_best, keep);

  std::vector<std::string> out;
  for (const auto& c : candidates)
    if (!keep.count(c.uuid)) out.push_back(c.uuid);
  return out;
}

}  // namespace ring
