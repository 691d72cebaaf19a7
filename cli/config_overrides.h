#pragma once
// `--config key=value` of `ring experiment create` and `ring config check`:
// Determined's overrides of single keys of a YAML config, nested keys written
// with dots (searcher.max_trials=4), values read as YAML scalars.
#include <string>
#include <vector>

#include "common/status.h"

namespace ring::cli {

// The config text with each override applied in order. With no overrides the
// text is returned as is (its line numbers unchanged); otherwise the result is
// the config written out again, which loses comments.
Result<std::string> ApplyConfigOverrides(const std::string& yaml_text,
                                         const std::vector<std::string>& overrides);

// The config changed for `ring experiment create --test`: one short trial.
Result<std::string> TestModeConfig(const std::string& yaml_text);

}  // namespace ring::cli
