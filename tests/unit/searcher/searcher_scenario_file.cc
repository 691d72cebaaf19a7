#include "tests/unit/searcher/searcher_scenario_file.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace ring::search::testing {
namespace {

[[noreturn]] void Fail(const std::string& path, const YAML::Node& at, const std::string& what) {
  throw std::runtime_error(path + ":" + std::to_string(at.Mark().line + 1) + ": " + what);
}

// The experiment config around the scenario's searcher and hyperparameters,
// so scenarios use experiment.yaml syntax and the real parser.
Result<ExperimentConfig> ParseConfig(const YAML::Node& root) {
  YAML::Node doc;
  doc["name"] = "scenario";
  doc["entrypoint"] = "./run";
  doc["searcher"] = root["searcher"];
  if (root["hyperparameters"]) doc["hyperparameters"] = root["hyperparameters"];
  return ParseExperimentConfig(YAML::Dump(doc), "scenario.yaml");
}

}  // namespace

std::optional<ScenarioEvent> ParseScenarioEvent(const std::string& text) {
  std::istringstream in(text);
  std::string verb;
  in >> verb;
  ScenarioEvent e;
  std::string word;
  if (verb == "start") {
    e.kind = ScenarioEvent::Kind::kStart;
  } else if (verb == "created" && in >> e.id) {
    e.kind = ScenarioEvent::Kind::kCreated;
  } else if (verb == "closed" && in >> e.id) {
    e.kind = ScenarioEvent::Kind::kClosed;
  } else if (verb == "validate" && in >> e.id) {
    std::string metric_word, length_word;
    if (!(in >> metric_word >> e.metric >> length_word >> e.length) || metric_word != "metric" ||
        length_word != "length")
      return std::nullopt;
    e.kind = ScenarioEvent::Kind::kValidate;
  } else if (verb == "report" && in >> e.id) {
    std::string time_word, metric_word;
    if (!(in >> time_word >> e.time >> metric_word >> e.metric) || time_word != "time" ||
        metric_word != "metric")
      return std::nullopt;
    e.kind = ScenarioEvent::Kind::kReport;
  } else if (verb == "exited" && in >> e.id >> word) {
    auto reason = ParseExitReason(word);
    if (!reason) return std::nullopt;
    e.kind = ScenarioEvent::Kind::kExited;
    e.reason = *reason;
  } else {
    return std::nullopt;
  }
  if (in >> word) return std::nullopt;  // trailing words
  return e;
}

bool MatchesPattern(const Action& action, const std::string& pattern) {
  const std::string actual = ToString(action);
  if (actual == pattern) return true;
  const auto* create = std::get_if<CreateTrial>(&action);
  if (!create) return false;
  const std::string head = "create " + std::to_string(create->request_id);
  if (pattern == head) return true;
  if (pattern.rfind(head + " ", 0) != 0) return false;
  auto hparams = nlohmann::json::parse(pattern.substr(head.size() + 1), nullptr, false);
  return !hparams.is_discarded() && hparams == create->hparams;
}

Scenario LoadScenario(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  YAML::Node root;
  try {
    root = YAML::Load(text.str());
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(path + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  Scenario s;
  s.path = path;
  if (!root.IsMap() || !root["searcher"]) Fail(path, root, "a scenario needs a searcher");
  for (const auto& kv : root) {
    const auto key = kv.first.as<std::string>();
    if (key != "description" && key != "searcher" && key != "hyperparameters" && key != "seed" &&
        key != "auto_created" && key != "error" && key != "steps")
      Fail(path, kv.first, "unknown key " + key);
  }
  if (root["seed"]) s.seed = root["seed"].as<uint64_t>();
  if (root["auto_created"]) s.auto_created = root["auto_created"].as<bool>();
  if (root["error"]) s.error = root["error"].as<std::string>();
  auto config = ParseConfig(root);
  if (!config.ok()) {
    if (!s.error) Fail(path, root["searcher"], "the config does not parse: " + config.status().message());
    // The line is of the config the runner assembled, not of the scenario file: drop it.
    s.parse_error = config.status().message();
    if (s.parse_error.rfind("scenario.yaml:", 0) == 0)
      s.parse_error = s.parse_error.substr(s.parse_error.find(": ") + 2);
    return s;
  }
  s.config = *config;
  if (s.error) return s;
  const YAML::Node steps = root["steps"];
  if (!steps || !steps.IsSequence() || steps.size() == 0) Fail(path, root, "a scenario needs steps");
  for (const auto& item : steps) {
    if (!item.IsMap()) Fail(path, item, "a step is a map {event: [actions]}");
    ScenarioStep step;
    step.line = item.Mark().line + 1;
    bool has_event = false;
    for (const auto& kv : item) {
      const auto key = kv.first.as<std::string>();
      if (key == "check") {
        step.check = kv.second;
        continue;
      }
      if (has_event) Fail(path, kv.first, "a step has one event");
      has_event = true;
      step.text = key;
      auto event = ParseScenarioEvent(key);
      if (!event) Fail(path, kv.first, "cannot read the event \"" + key + "\"");
      step.event = *event;
      if (!kv.second.IsSequence()) Fail(path, kv.second, "the expected actions must be a list ([] for none)");
      for (const auto& a : kv.second) step.expect.push_back(a.as<std::string>());
    }
    if (!has_event) Fail(path, item, "a step needs an event");
    s.steps.push_back(std::move(step));
  }
  return s;
}

}  // namespace ring::search::testing
