#pragma once
// The runtime's own command-line flags (local mode): --hparams FILE.json,
// --hparam key=value (repeatable; dots in the key make nested maps),
// --batches N, --seed S, --checkpoint-dir DIR (default ./checkpoints),
// --resume CHECKPOINT_DIR. Both "--flag value" and "--flag=value" are accepted;
// every other argument is left for the trial in `remaining`.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ring::trial {

struct RuntimeFlags {
  std::optional<std::string> hparams_file;
  std::vector<std::string> hparam_assignments;  // "key=value", in order
  std::optional<int64_t> batches;
  std::optional<uint64_t> seed;
  std::optional<std::string> checkpoint_dir;
  std::optional<std::string> resume;
  std::vector<std::string> remaining;  // without argv[0]
  std::vector<std::string> seen;       // names of the runtime flags given

  bool empty() const { return seen.empty(); }
};

// Throws ConfigError on a flag without a value or a malformed number.
RuntimeFlags ParseRuntimeFlags(int argc, const char* const* argv);

// `base`, then the file, then each assignment in order. A value is parsed as
// JSON when it parses ("0.1", "true", "[1,2]") and kept as a string otherwise.
// Throws ConfigError when the file is unreadable or not a JSON object.
nlohmann::json BuildLocalHparams(const RuntimeFlags& flags, nlohmann::json base);

}  // namespace ring::trial
