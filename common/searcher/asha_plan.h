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
// contract max_length is max_time, in units of the time metric. A max_length
// in records or epochs is planned in that unit (R too), as Determined plans
// it, and each rung counted in batches for the operations.
#include <cstdint>
#include <utility>
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
  // The same in max_length's unit (records or epochs): lengths are these
  // counted in batches. Equal to lengths when max_length is in batches.
  std::vector<int64_t> unit_lengths;
};

// Whether one entry of searcher.bracket_rungs can be run: 1 to max_rungs
// rungs, and at most kMaxAshaRungs. The message (without the key) says why not.
Status CheckBracketRungs(int64_t rungs, int64_t max_rungs);
// Whether operations are planned in max_length's unit: records or epochs
// that can be counted in batches, under the operations contract, and whose
// ASHA rungs stay distinct in batches (else rungs are planned in batches).
bool InUnit(const SearcherConfig& config);
// A length in max_length's unit counted in batches (rounded up, as the
// config's max_length is); the length itself when not InUnit.
int64_t UnitToBatches(const SearcherConfig& config, int64_t length);
// Every operation length a trial of this search may get, as (batches,
// length in max_length's unit) ascending; empty when not InUnit.
std::vector<std::pair<int64_t, int64_t>> OperationUnitLengths(const SearcherConfig& config);

// R above; at most min(max_rungs, kMaxAshaRungs + 1).
int AshaRungs(const SearcherConfig& config);

// The brackets in the order the search numbers them (0, 1, ...). Needs a
// config CheckSearcherConfig() accepted.
std::vector<AshaBracketPlan> PlanAdaptiveAsha(const SearcherConfig& config);

}  // namespace ring::search
