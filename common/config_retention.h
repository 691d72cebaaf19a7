#pragma once
// Changing how long an existing experiment keeps its checkpoints and logs
// (Determined's `det experiment set gc-policy`): its stored config with the
// new checkpoint_storage.save_* counts and log retention written in.
#include <cstdint>
#include <optional>
#include <string>

#include "common/status.h"

namespace ring {

struct RetentionPatch {
  std::optional<int64_t> save_experiment_best;  // each >= 0
  std::optional<int64_t> save_trial_best;
  std::optional<int64_t> save_trial_latest;
  // Outer: whether to change it; inner: days (>= 0, or -1 to keep logs), or
  // nullopt for the master's retention.log_retention_days.
  std::optional<std::optional<int64_t>> log_retention_days;
  bool empty() const {
    return !save_experiment_best && !save_trial_best && !save_trial_latest && !log_retention_days;
  }
};

// The config text with the patch applied (as YAML; comments are not kept).
// log_retention_days goes where the config already says it (top level or
// retention_policy), else into retention_policy. kInvalidConfig when the
// text is not a YAML map.
Result<std::string> WithRetention(const std::string& config_yaml, const RetentionPatch& patch);

}  // namespace ring
