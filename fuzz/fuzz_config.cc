// Fuzzes the experiment config parser (common/experiment_config.h): YAML text
// in, a config or an error out. Every error must be kInvalidConfig and name
// the file and a line of the text ("experiment.yaml:14: ..."); an accepted
// config must give the default hyperparameters of the `single` searcher.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/experiment_config.h"
#include "fuzz/fuzz_check.h"

namespace {

// The line named by "experiment.yaml:<line>: ...", or 0 when there is none.
long NamedLine(const std::string& message) {
  const std::string prefix = "experiment.yaml:";
  if (message.rfind(prefix, 0) != 0) return 0;
  size_t i = prefix.size();
  long line = 0;
  for (; i < message.size() && i < prefix.size() + 9 && message[i] >= '0' && message[i] <= '9'; ++i)
    line = line * 10 + (message[i] - '0');
  if (i + 1 >= message.size() || message[i] != ':' || message[i + 1] != ' ') return 0;
  return line;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto config = ring::ParseExperimentConfig(text);
  if (!config.ok()) {
    const auto& status = config.status();
    FUZZ_CHECK(status.code() == ring::ErrorCode::kInvalidConfig, status.ToString());
    const long lines = std::max<long>(1, std::count(text.begin(), text.end(), '\n') + 1);
    const long line = NamedLine(status.message());
    FUZZ_CHECK(line >= 1 && line <= lines, "the error names no line of the text: " + status.message());
    return 0;
  }
  FUZZ_CHECK(!config->entrypoint.empty(), "accepted a config without an entrypoint");
  const auto hparams = ring::DefaultHparams(config->hyperparameters);
  FUZZ_CHECK(hparams.is_object(), hparams.dump());
  (void)hparams.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  (void)config->data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return 0;
}
