// AshaBracket's snapshot: its trials with their rungs, the trials that exited
// early, and each rung's sorted results. How many trials each rung is
// training is not stored: it follows from the rest (see Restore).
#include "common/searcher/asha_bracket.h"

#include "common/searcher/snapshot_json.h"

namespace ring::search {

nlohmann::json AshaBracket::Snapshot() const {
  auto trials = nlohmann::json::array();
  for (const auto& [id, rung] : rung_of_) trials.push_back({id, rung});
  auto rungs = nlohmann::json::array();
  for (const Rung& rung : rungs_) {
    auto results = nlohmann::json::array();
    for (const Result& r : rung.results) results.push_back({r.id, r.metric, r.promoted});
    rungs.push_back(results);
  }
  return {{"max_trials", max_trials_}, {"trials", trials}, {"exited", exited_}, {"rungs", rungs}};
}

void AshaBracket::Restore(const nlohmann::json& state, const TrialTable& table) {
  max_trials_ = IntField(state, "max_trials", 0, plan_.max_trials);
  rung_of_.clear();
  for (const auto& pair : ArrayOf(Field(state, "trials"), "trials")) {
    if (!pair.is_array() || pair.size() != 2) throw SnapshotError("bracket trials must be [id, rung] pairs");
    const RequestId id = IntOf(pair[0], "trial id", 1);
    const auto rung = static_cast<int>(IntOf(pair[1], "rung", 0, plan_.rungs - 1));
    if (!table.Find(id)) throw SnapshotError("bracket trial " + std::to_string(id) + " is not a known trial");
    if (!rung_of_.emplace(id, rung).second) throw SnapshotError("bracket lists a trial twice");
  }
  if (made() > max_trials_) throw SnapshotError("bracket has more trials than its max_trials");
  exited_.clear();
  for (const auto& id : ArrayOf(Field(state, "exited"), "exited")) {
    const RequestId e = IntOf(id, "exited trial", 1);
    const TrialEntry* t = table.Find(e);
    if (!Has(e) || !t || !t->ended())
      throw SnapshotError("exited trial " + std::to_string(e) + " is not an ended trial of the bracket");
    exited_.insert(e);
  }
  const auto& rungs = ArrayOf(Field(state, "rungs"), "rungs");
  if (rungs.size() != rungs_.size())
    throw SnapshotError("bracket must have " + std::to_string(plan_.rungs) + " rungs");
  for (size_t k = 0; k < rungs_.size(); ++k) {
    Rung& rung = rungs_[k];
    rung = Rung{};
    for (const auto& item : ArrayOf(rungs[k], "rung results")) {
      if (!item.is_array() || item.size() != 3)
        throw SnapshotError("rung results must be [id, metric, promoted]");
      Result r{IntOf(item[0], "result id", 1), DoubleOf(item[1], "result metric"),
               BoolOf(item[2], "promoted")};
      auto at = rung_of_.find(r.id);
      // A result at rung k comes from a trial that reached k; a promoted one has moved on.
      if (at == rung_of_.end() || static_cast<size_t>(at->second) < k + (r.promoted ? 1 : 0) ||
          k + 1 == rungs_.size() || rung.Reported(r.id))
        throw SnapshotError("rung " + std::to_string(k) + " has a result that cannot be there");
      if (!rung.results.empty() && rung.results.back().metric > r.metric)
        throw SnapshotError("rung " + std::to_string(k) + " results are not sorted");
      rung.results.push_back(r);
    }
  }
  // A trial is training at its rung until it reports there; at the top rung,
  // which keeps no results, until it is closed.
  for (const auto& [id, k] : rung_of_) {
    Rung& rung = rungs_[static_cast<size_t>(k)];
    const bool top = k == plan_.rungs - 1;
    if (top ? !table.Find(id)->closed : !rung.Reported(id)) ++rung.training;
  }
}

}  // namespace ring::search
