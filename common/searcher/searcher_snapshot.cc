// Searcher: construction from a config, and the snapshot round trip.
#include "common/searcher/asha_plan.h"
#include "common/searcher/config_check.h"
#include "common/searcher/searcher_state.h"
#include "common/searcher/snapshot_json.h"

namespace ring::search {
namespace {

constexpr int64_t kSnapshotVersion = 1;

}  // namespace

Result<Searcher> Searcher::Create(const SearcherConfig& config,
                                  const std::map<std::string, Hyperparameter>& space, uint64_t seed) {
  if (Status s = CheckSearcherConfig(config, space); !s.ok()) return s;
  auto state = std::make_unique<State>();
  state->config = config;
  state->trial_driven = ContractOf(config) == SearcherContract::kTrialDriven;
  state->method = MakeSearchMethod(config, space, seed);
  state->rng = Rng(seed);
  return Searcher(std::move(state));
}

nlohmann::json Searcher::Snapshot() const {
  const State& s = *state_;
  return {{"version", kSnapshotVersion}, {"searcher", s.config.name},      {"rng", s.rng.ToJson()},
          {"table", s.trials.ToJson()},  {"started", s.started},           {"shutdown", s.shutdown},
          {"failed", s.failed},          {"method", s.method->Snapshot()}, {"in_unit", InUnit(s.config)}};
}

Result<Searcher> Searcher::Restore(const SearcherConfig& config,
                                   const std::map<std::string, Hyperparameter>& space,
                                   const nlohmann::json& snapshot) {
  // A search planned in batches (before searchers planned in max_length's
  // unit) keeps planning in batches: its trials are at those rungs.
  SearcherConfig planned = config;
  if (snapshot.is_object()) {
    const auto in_unit = snapshot.find("in_unit");
    if (in_unit != snapshot.end() && !in_unit->is_boolean())
      return InvalidArgument("searcher snapshot: in_unit must be a boolean, got " + in_unit->dump());
    if (in_unit == snapshot.end() || !in_unit->get<bool>()) planned.records_per_unit = 0;
  }
  auto created = Create(planned, space, 0);
  if (!created.ok()) return created.status();
  Searcher searcher = std::move(created).value();
  State& s = *searcher.state_;
  try {
    if (IntField(snapshot, "version") != kSnapshotVersion)
      throw SnapshotError("version " + Field(snapshot, "version").dump() + " is not supported");
    const std::string name = StringOf(Field(snapshot, "searcher"), "searcher");
    if (name != config.name)
      throw SnapshotError("it is of a " + name + " searcher, the config names " + config.name);
    s.rng = Rng::FromJson(Field(snapshot, "rng"));
    s.trials = TrialTable::FromJson(Field(snapshot, "table"));
    s.started = BoolField(snapshot, "started");
    s.shutdown = BoolField(snapshot, "shutdown");
    s.failed = BoolField(snapshot, "failed");
    if (!s.started && !s.trials.entries().empty()) throw SnapshotError("trials exist before the start");
    if (s.shutdown && s.trials.live() > 0) throw SnapshotError("shut down with trials still running");
    s.method->Restore(ObjectOf(Field(snapshot, "method"), "method"), s.trials);
  } catch (const SnapshotError& e) {
    return InvalidArgument(std::string("searcher snapshot: ") + e.what());
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(std::string("searcher snapshot: ") + e.what());
  }
  return searcher;
}

}  // namespace ring::search
