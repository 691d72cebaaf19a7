#pragma once
// Scenario files for the searchers (tests/searcher/scenarios/*.yaml): a
// searcher config, a seed, and a sequence of events, each with the actions
// the searcher must answer. The format is described in
// tests/searcher/scenarios/README.md.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "common/experiment_config.h"
#include "common/searcher/searcher.h"

namespace ring::search::testing {

struct ScenarioEvent {
  enum class Kind { kStart, kCreated, kValidate, kReport, kClosed, kExited };
  Kind kind = Kind::kStart;
  RequestId id = 0;
  double metric = 0;
  int64_t length = 0;
  double time = 0;  // report: the time metric's value
  ExitReason reason = ExitReason::kErrored;
};

struct ScenarioStep {
  int line = 0;      // of the step in the file
  std::string text;  // the event as written
  ScenarioEvent event;
  std::vector<std::string> expect;  // action patterns, in order
  YAML::Node check;                 // optional state checks
};

struct Scenario {
  std::string path;
  ExperimentConfig config;
  uint64_t seed = 0;
  bool auto_created = true;          // answer every CreateTrial with TrialCreated
  std::optional<std::string> error;  // the config must be refused with this message
  std::string parse_error;           // what the config parser said, if it refused
  std::vector<ScenarioStep> steps;
};

// Loads one file; throws std::runtime_error "path:line: what" on a malformed file.
Scenario LoadScenario(const std::string& path);

// Parses "validate 3 metric 0.5 length 40" and the other event forms.
std::optional<ScenarioEvent> ParseScenarioEvent(const std::string& text);

// Whether an action matches a pattern: the action's ToString() form, where
// "create N" matches any hyperparameters and seed and "create N {...}" any seed.
bool MatchesPattern(const Action& action, const std::string& pattern);

}  // namespace ring::search::testing
