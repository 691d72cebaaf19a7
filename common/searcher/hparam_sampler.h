#pragma once
// Draws one point of a hyperparameter space (random and adaptive_asha):
//   const        its value
//   int          uniform integer in [minval, maxval]
//   double       uniform in [minval, maxval)
//   log          base ^ uniform(minval, maxval) (minval/maxval are exponents)
//   categorical  one of vals, each equally likely
//   nested       a JSON object of its children, drawn the same way
// Keys are visited in sorted order, so a seed gives the same point everywhere.
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "common/experiment_config.h"
#include "common/searcher/rng.h"

namespace ring::search {

nlohmann::json SampleHparams(const std::map<std::string, Hyperparameter>& space, Rng& rng);

}  // namespace ring::search
