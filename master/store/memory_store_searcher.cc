// MemoryStore: searcher snapshots and the trials a searcher step creates.
#include "master/store/memory_store.h"

namespace ring {

Result<std::vector<int64_t>> MemoryStore::CommitSearcherStep(const SearcherStep& step) {
  const WriteNotice changes(experiments_generation_);
  {
    std::lock_guard lock(mu_);
    if (!experiments_.contains(step.experiment_id))
      return NotFound("experiment " + std::to_string(step.experiment_id) + " not found");
    std::set<int64_t> seen;
    for (const auto& t : step.new_trials) {
      if (t.experiment_id != step.experiment_id || !t.request_id)
        return InvalidArgument("searcher step: every new trial needs the experiment and a request id");
      if (!seen.insert(*t.request_id).second)
        return Conflict("searcher step: request " + std::to_string(*t.request_id) + " appears twice");
      for (const auto& [id, other] : trials_)
        if (other.experiment_id == t.experiment_id && other.request_id == t.request_id)
          return Conflict("searcher step: experiment " + std::to_string(t.experiment_id) +
                          " already has a trial for searcher request " + std::to_string(*t.request_id));
    }
  }
  // Nothing below can fail once the checks passed: the step lands whole.
  std::vector<int64_t> ids;
  for (const auto& t : step.new_trials) {
    auto id = CreateTrial(t);
    if (!id.ok()) return id.status();
    ids.push_back(*id);
  }
  std::lock_guard lock(mu_);
  searcher_snapshots_[step.experiment_id] = step.snapshot_json;
  return ids;
}

Result<std::string> MemoryStore::GetSearcherSnapshot(int64_t experiment_id) {
  std::lock_guard lock(mu_);
  auto it = searcher_snapshots_.find(experiment_id);
  if (it == searcher_snapshots_.end())
    return NotFound("experiment " + std::to_string(experiment_id) + " has no searcher snapshot");
  return it->second;
}

}  // namespace ring
