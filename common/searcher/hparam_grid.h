#pragma once
// The points of a grid search: the cartesian product of every
// hyperparameter's grid values, nested maps included.
//   const        its value (one point)
//   categorical  every value, in the order given
//   int          `count` evenly spaced integers from minval to maxval, both
//                included, rounded to the nearest and de-duplicated; a count
//                beyond the range's size gives each integer once
//   double       `count` evenly spaced values from minval to maxval, both included
//   log          base ^ e for `count` evenly spaced exponents e from minval to maxval
// A count of 1 gives the middle of the range (Determined's choice): the
// rounded midpoint for int, (minval + maxval) / 2 for double, and base to the
// middle exponent for log.
//
// Order: the first hyperparameter in sorted key order varies slowest, the
// last fastest (like nested loops in key order); a nested map's own points
// are ordered the same way. A space with no hyperparameters has one point, {}.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/experiment_config.h"

namespace ring::search {

// More points than this is refused (searcher validation).
inline constexpr int64_t kMaxGridPoints = 100'000;

// The grid values of one hyperparameter. An int, double or log without
// `count` has none (validation refuses such grids).
std::vector<nlohmann::json> GridValues(const Hyperparameter& h);

// How many points the grid has, saturating at kMaxGridPoints + 1, without
// building it.
int64_t GridSize(const std::map<std::string, Hyperparameter>& space);

// Every point, in the order above. Call only when GridSize() <= kMaxGridPoints.
std::vector<nlohmann::json> GridPoints(const std::map<std::string, Hyperparameter>& space);

}  // namespace ring::search
