#pragma once
// What a searcher needs of the experiment config beyond what the parser
// checks: grid counts and grid size, limits on max_trials, and the sanity of
// hand-built configs (the CLI and tests build SearcherConfig directly).
// Errors are kInvalidConfig naming the field, e.g.
// "hyperparameters.lr.count is required by the grid searcher".
#include <cstdint>
#include <map>
#include <string>

#include "common/experiment_config.h"
#include "common/status.h"

namespace ring::search {

// Most trials a random or adaptive_asha search may plan (trials are created
// in one step when max_concurrent_trials is 0).
inline constexpr int64_t kMaxTrials = 100'000;

Status CheckSearcherConfig(const SearcherConfig& config, const std::map<std::string, Hyperparameter>& space);

}  // namespace ring::search
