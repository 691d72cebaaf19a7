#pragma once
// Continuing a trial as a new experiment (Determined's "continue trial"): the
// parent experiment's config with the trial's hyperparameters as constants,
// its seed as the experiment seed (the `single` searcher's one trial takes
// it), and a `single` searcher that warm-starts from the trial's latest
// checkpoint and trains to a new length in the parent searcher's units.
#include <cstdint>
#include <string>

#include "common/status.h"

namespace ring {

struct ContinueSource {
  int64_t experiment_id = 0;
  int64_t trial_id = 0;
  std::string hparams_json = "{}";  // the trial's values, nested as in the config
  int64_t seed = 0;
};

// The new experiment's config as YAML text. `length` is the new total, in
// the parent searcher's units: max_length's unit (batches, records or
// epochs) under the operations contract, time_metric's under the
// trial-driven one (batches when the parent names neither). kInvalidConfig
// when the parent's config is not a YAML map; kInvalidArgument when length
// is not positive.
Result<std::string> ContinueConfig(const std::string& parent_yaml, const ContinueSource& source,
                                   int64_t length);

// The experiment's own config with its searcher's length set to `length`,
// in the same units as above: continuing its trial in place.
Result<std::string> WithSearcherLength(const std::string& config_yaml, int64_t experiment_id, int64_t length);

}  // namespace ring
