#pragma once
// Runs a searcher against simulated validation metrics, without running
// anything, to show what a search will do: how many trials train to which
// length, in which bracket, and how many batches that takes in all. The
// metrics are drawn from a seeded generator, so a preview is repeatable;
// promotions in a real search follow the metrics its trials report.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/experiment_config.h"
#include "common/searcher/searcher.h"
#include "common/status.h"

namespace ring::search {

// One rung of one bracket: how many trials trained to `length` batches.
struct SimulatedRung {
  int bracket = 0;
  int rung = 0;
  int64_t length = 0;
  int64_t trials = 0;
};

struct Simulation {
  std::vector<SimulatedRung> rungs;  // by bracket, then length
  int64_t trials = 0;                // trials created
  int64_t total_batches = 0;         // batches the search trains in all
  int64_t full_batches = 0;          // trials x max_length: training every trial fully
  bool finished = false;             // the searcher shut down within the event budget
};

// `seed` seeds both the searcher (as reproducibility.experiment_seed would)
// and the simulated metrics. At most `max_events` validations are simulated.
Result<Simulation> Simulate(const SearcherConfig& config, const std::map<std::string, Hyperparameter>& space,
                            uint64_t seed, int64_t max_events = 1000000);

// The plan as a table with a total line, for `ring preview-search`.
std::string FormatSimulation(const SearcherConfig& config, const Simulation& simulation);

}  // namespace ring::search
