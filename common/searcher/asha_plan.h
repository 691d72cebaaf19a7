#pragma once
// The shape of an adaptive_asha search, from its config alone: how many rungs
// (R), which brackets, how many trials and how much concurrency each bracket
// gets, and the length of every rung. Determined's adaptive ASHA rules
// (docs/searchers.md has them with a worked example):
//   R = min(max_rungs, floor(log_d(max_length)) + 1, floor(log_d(max_trials)) + 1)
//   brackets by mode: aggressive [R], standard [(R-1)/2+1 .. R], conservative
//   [1 .. R], or searcher.bracket_rungs as given (then mode and R play no
//   part), ordered by rungs, most first (the most early stopping first);
//   max_trials split by weight d^(r-1)/r (floor, at least 1, remainder to the
//   first bracket); max_concurrent_trials split evenly (remainder to the
//   first brackets), or, when 0, max(trials of the last bracket, int(d)) each;
//   rung k of a bracket of r rungs trains to max(floor(max_length / d^(r-1-k)), 1).
// The logarithms are computed exactly (the largest k with d^k <= x, by
// multiplication) rather than with floating-point log. Under the trial-driven
// contract max_length is max_time, in units of the time metric.
#include <cstdint>
#include <vector>

#include "common/experiment_config.h"
#include "common/status.h"

namespace ring::search {

// Adaptive ASHA refuses configs that would have more rungs than this.
inline constexpr int kMaxAshaRungs = 100;

struct AshaBracketPlan {
  int rungs = 1;
  int64_t max_trials = 1;
  int64_t max_concurrent_trials = 1;
  std::vector<int64_t> lengths;  // each rung's length (batches, or time-metric units), ascending
};

// Whether one entry of searcher.bracket_rungs can be run: 1 to max_rungs
// rungs, and at most kMaxAshaRungs. The message (without the key) says why not.
Status CheckBracketRungs(int64_t rungs, int64_t max_rungs);

// R above; at most min(max_rungs, kMaxAshaRungs + 1).
int AshaRungs(const SearcherConfig& config);

// The brackets in the order the search numbers them (0, 1, ...). Needs a
// config CheckSearcherConfig() accepted.
std::vector<AshaBracketPlan> PlanAdaptiveAsha(const SearcherConfig& config);

}  // namespace ring::search
