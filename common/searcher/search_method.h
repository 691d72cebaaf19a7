#pragma once
// The interface between the Searcher (bookkeeping common to all searchers,
// searcher.cc) and one search algorithm. A SearchMethod only sees events the
// Searcher has already checked: a validation of the trial's outstanding
// TrainTo, the end of a trial that had not ended. It acts through a
// SearchContext, which records every decision in the trial table and appends
// it to the event's actions.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/experiment_config.h"
#include "common/searcher/rng.h"
#include "common/searcher/searcher.h"
#include "common/searcher/trial_table.h"

namespace ring::search {

// What a method may do while it handles one event. Lives for that event.
class SearchContext {
 public:
  SearchContext(TrialTable& trials, Rng& rng, std::vector<Action>& out, bool& failed,
                bool trial_driven = false)
      : trials_(trials), rng_(rng), out_(out), failed_(failed), trial_driven_(trial_driven) {}

  Rng& rng() { return rng_; }
  const TrialTable& trials() const { return trials_; }

  // Decides a new trial; returns its request id.
  RequestId Create(nlohmann::json hparams, int64_t seed);
  // Gives the trial its next operation (ignored for a closed trial, and
  // under the trial-driven contract, where trials get no operations).
  void TrainTo(RequestId id, int64_t length);
  // Decides that the trial gets no more operations (ignored if closed).
  void Close(RequestId id);
  // The search will end with Shutdown{failure = true}.
  void Fail() { failed_ = true; }

  // A seed for a new trial: uniform in [0, 2^31 - 1], so it suits any framework.
  int64_t DrawTrialSeed() { return rng_.UniformInt(0, 0x7fffffff); }

 private:
  TrialTable& trials_;
  Rng& rng_;
  std::vector<Action>& out_;
  bool& failed_;
  bool trial_driven_;
};

class SearchMethod {
 public:
  virtual ~SearchMethod() = default;

  virtual void Start(SearchContext& ctx) = 0;
  // The trial's outstanding TrainTo completed with `metric`; the Searcher has
  // already cleared the operation.
  virtual void ValidationCompleted(SearchContext& ctx, RequestId id, double metric) = 0;
  // A trial the method closed has ended.
  virtual void TrialClosed(SearchContext& ctx, RequestId id) = 0;
  // Trial-driven contract: a trial ended on its own, exiting 0 (its work is
  // done) without having been closed; the table already records it closed.
  virtual void TrialFinished(SearchContext& ctx, RequestId id) { TrialClosed(ctx, id); }
  // Trial-driven contract: a validation at `time` in time-metric units.
  virtual void MetricsReported(SearchContext&, RequestId, double /*time*/, double /*metric*/) {}
  // A trial ended before the method closed it; the table already records it.
  virtual void TrialExitedEarly(SearchContext& ctx, RequestId id, ExitReason reason) = 0;

  // No trial will be created or trained any more.
  virtual bool Finished() const = 0;
  // The batches the plan expects to train in all (the denominator of Progress).
  virtual double PlannedBatches() const = 0;
  // The trials the plan expects (trial-driven progress: ended over these).
  virtual double PlannedTrials() const { return 1; }
  virtual int Bracket(RequestId) const { return 0; }

  virtual nlohmann::json Snapshot() const = 0;
  // Loads Snapshot() output; throws SnapshotError on a shape it would not
  // write or on trials the table does not know.
  virtual void Restore(const nlohmann::json& state, const TrialTable& trials) = 0;
};

// The method for a config that CheckSearcherConfig() accepted.
std::unique_ptr<SearchMethod> MakeSearchMethod(const SearcherConfig& config,
                                               const std::map<std::string, Hyperparameter>& space,
                                               uint64_t seed);

}  // namespace ring::search
