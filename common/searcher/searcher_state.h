#pragma once
// Searcher's private state, shared by searcher.cc (events) and
// searcher_snapshot.cc (Create, Snapshot, Restore). Owned by one Searcher;
// the master calls it under the experiment controller's mutex.
#include <memory>
#include <vector>

#include "common/searcher/rng.h"
#include "common/searcher/search_method.h"
#include "common/searcher/searcher.h"
#include "common/searcher/trial_table.h"

namespace ring::search {

struct Searcher::State {
  SearcherConfig config;
  std::unique_ptr<SearchMethod> method;
  Rng rng{0};
  TrialTable trials;
  bool started = false;
  bool shutdown = false;
  bool failed = false;        // the method gave up
  bool trial_driven = false;  // ContractOf(config) == kTrialDriven

  SearchContext Context(std::vector<Action>& out) {
    return SearchContext(trials, rng, out, failed, trial_driven);
  }
  // After each event: once the method is finished, closes trials that can
  // get no operation, and shuts down when every trial has ended.
  void Settle(std::vector<Action>& out);
  // Shutdown's failure flag: the method gave up, or no trial completed and
  // some errored or had invalid hyperparameters.
  bool Failed() const;
};

}  // namespace ring::search
