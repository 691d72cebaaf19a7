#include "common/experiment_config.h"

#include <filesystem>

#include <algorithm>
#include <cmath>
#include <optional>

#include <yaml-cpp/depthguard.h>

#include "common/yaml_walker.h"

namespace ring {
namespace {

using Type = Hyperparameter::Type;

// Turns one YAML document into an ExperimentConfig, section by section. Owns
// the walker of that one parse (its error prefix and value budget); runs on
// the caller's thread and is thrown away afterwards.
class ConfigParser {
 public:
  explicit ConfigParser(const std::string& file) : w_(file) {}

  ExperimentConfig Parse(const YAML::Node& root);

 private:
  Hyperparameter ParseHparam(const YAML::Node& node, const std::string& path, int depth);
  // The grid searcher needs `count` on every int, double and log hyperparameter.
  void RequireGridCount(const YAML::Node& node, const std::string& path, const Hyperparameter& h);
  void ParseSearcher(const YAML::Node& node, SearcherConfig& s);
  void ParseResources(const YAML::Node& node, ResourcesConfig& r);
  CheckpointStorageConfig ParseCheckpointStorage(const YAML::Node& node);
  void ParseEnvironment(const YAML::Node& node, std::map<std::string, std::string>& out);
  int64_t Batches(const YAML::Node& node, const std::string& path, int64_t min, const char* what);

  YamlWalker w_;
};

int64_t ConfigParser::Batches(const YAML::Node& node, const std::string& path, int64_t min,
                              const char* what) {
  if (!node.IsMap()) w_.Fail(node, path + " must be a map like {batches: N}, got " + YamlWalker::Show(node));
  w_.CheckKeys(node, path, {"batches"});
  return w_.Int(w_.Required(node, path, "batches"), path + ".batches", min, what);
}

Hyperparameter ConfigParser::ParseHparam(const YAML::Node& node, const std::string& path, int depth) {
  Hyperparameter h;
  if (!node.IsMap()) {  // a scalar or a list is a constant
    if (node.IsNull()) w_.Fail(node, path + " must have a value");
    h.type = Type::kConst;
    h.value = w_.ToJson(node, path, depth);
    return h;
  }
  if (!node["type"]) {  // a map without `type` nests hyperparameters
    h.type = Type::kNested;
    for (const auto& [key, value] : w_.Entries(node, path, depth))
      h.nested[key] = ParseHparam(value, YamlWalker::Join(path, key), depth + 1);
    return h;
  }
  const std::string type = w_.String(node["type"], path + ".type");
  if (type == "const") {
    w_.CheckKeys(node, path, {"type", "val"});
    h.type = Type::kConst;
    h.value = w_.ToJson(w_.Required(node, path, "val"), path + ".val", depth + 1);
  } else if (type == "int" || type == "double" || type == "log") {
    if (type == "log")
      w_.CheckKeys(node, path, {"type", "minval", "maxval", "base", "count"});
    else
      w_.CheckKeys(node, path, {"type", "minval", "maxval", "count"});
    h.type = type == "int" ? Type::kInt : type == "double" ? Type::kDouble : Type::kLog;
    const auto min_node = w_.Required(node, path, "minval");
    const auto max_node = w_.Required(node, path, "maxval");
    if (h.type == Type::kInt) {
      // Held as doubles, which are exact for integers up to 2^53, and turned
      // back into int64_t (midpoints, samples): larger bounds would overflow.
      constexpr int64_t kLimit = int64_t{1} << 53;
      const auto bound = [&](const YAML::Node& n, const std::string& p) {
        const int64_t v = w_.Int(n, p, INT64_MIN, "an integer");
        if (v < -kLimit || v > kLimit)
          w_.Fail(n, p + " must be an integer from -2^53 to 2^53, got " + YamlWalker::Show(n));
        return static_cast<double>(v);
      };
      h.minval = bound(min_node, path + ".minval");
      h.maxval = bound(max_node, path + ".maxval");
    } else {
      h.minval = w_.Double(min_node, path + ".minval");
      h.maxval = w_.Double(max_node, path + ".maxval");
    }
    if (h.minval > h.maxval)
      w_.Fail(max_node, path + ".maxval must be at least minval (" + YamlWalker::Show(min_node) + "), got " +
                            YamlWalker::Show(max_node));
    if (node["base"]) {
      h.base = w_.Double(node["base"], path + ".base");
      if (!(h.base > 0) || h.base == 1)
        w_.Fail(node["base"],
                path + ".base must be positive and not 1, got " + YamlWalker::Show(node["base"]));
    }
    if (node["count"]) h.count = w_.Int(node["count"], path + ".count", 1, "a positive integer");
  } else if (type == "categorical") {
    w_.CheckKeys(node, path, {"type", "vals"});
    h.type = Type::kCategorical;
    const auto vals = w_.Required(node, path, "vals");
    if (!vals.IsSequence()) w_.Fail(vals, path + ".vals must be a list, got " + YamlWalker::Show(vals));
    if (vals.size() == 0) w_.Fail(vals, path + ".vals must not be empty");
    for (size_t i = 0; i < vals.size(); ++i)
      h.vals.push_back(w_.ToJson(vals[i], path + ".vals[" + std::to_string(i) + "]", depth + 2));
  } else {
    w_.Fail(node["type"],
            path + ".type must be one of const, int, double, log, categorical, got \"" + type + "\"");
  }
  return h;
}

void ConfigParser::RequireGridCount(const YAML::Node& node, const std::string& path,
                                    const Hyperparameter& h) {
  if ((h.type == Type::kInt || h.type == Type::kDouble || h.type == Type::kLog) && !h.count)
    w_.Fail(node, path + ".count is required by the grid searcher");
  for (const auto& [key, child] : h.nested) RequireGridCount(node[key], YamlWalker::Join(path, key), child);
}

void ConfigParser::ParseSearcher(const YAML::Node& node, SearcherConfig& s) {
  const std::string p = "searcher";
  w_.RequireMap(node, p);
  w_.CheckKeys(node, p,
               {"name", "metric", "smaller_is_better", "max_trials", "max_length", "max_concurrent_trials",
                "mode", "divisor", "max_rungs", "time_metric", "max_time"});
  const auto name = w_.Required(node, p, "name");
  s.name = w_.String(name, p + ".name");
  if (s.name != "single" && s.name != "grid" && s.name != "random" && s.name != "adaptive_asha")
    w_.Fail(name, p + ".name must be one of single, grid, random, adaptive_asha, got \"" + s.name + "\"");
  s.metric = w_.String(w_.Required(node, p, "metric"), p + ".metric", true);
  if (node["smaller_is_better"])
    s.smaller_is_better = w_.Bool(node["smaller_is_better"], p + ".smaller_is_better");
  if (s.name == "random" || s.name == "adaptive_asha") w_.Required(node, p, "max_trials");
  if (node["max_trials"])
    s.max_trials = w_.Int(node["max_trials"], p + ".max_trials", 1, "a positive integer");
  if (node["time_metric"]) s.time_metric = w_.String(node["time_metric"], p + ".time_metric", true);
  if (node["max_time"]) s.max_time = w_.Int(node["max_time"], p + ".max_time", 1, "a positive integer");
  if (s.time_metric && !node["max_time"]) w_.Required(node, p, "max_time");
  if (node["max_time"] && !s.time_metric) w_.Required(node, p, "time_metric");
  // Without max_length the trial decides how long to train (the trial-driven
  // contract); adaptive_asha then needs time_metric and max_time.
  if (node["max_length"] || (s.name == "adaptive_asha" && !s.time_metric))
    s.max_length_batches =
        Batches(w_.Required(node, p, "max_length"), p + ".max_length", 1, "a positive integer");
  if (node["max_concurrent_trials"])
    s.max_concurrent_trials =
        w_.Int(node["max_concurrent_trials"], p + ".max_concurrent_trials", 0, "an integer >= 0");
  if (node["mode"]) {
    s.mode = w_.String(node["mode"], p + ".mode");
    if (s.mode != "aggressive" && s.mode != "standard" && s.mode != "conservative")
      w_.Fail(node["mode"],
              p + ".mode must be one of aggressive, standard, conservative, got \"" + s.mode + "\"");
  }
  if (node["divisor"]) {
    s.divisor = w_.Double(node["divisor"], p + ".divisor");
    if (!(s.divisor > 1))
      w_.Fail(node["divisor"],
              p + ".divisor must be greater than 1, got " + YamlWalker::Show(node["divisor"]));
  }
  if (node["max_rungs"]) s.max_rungs = w_.Int(node["max_rungs"], p + ".max_rungs", 1, "a positive integer");
}

void ConfigParser::ParseResources(const YAML::Node& node, ResourcesConfig& r) {
  const std::string p = "resources";
  w_.RequireMap(node, p);
  w_.CheckKeys(node, p, {"slots_per_trial", "resource_pool", "priority", "weight", "max_slots", "launch"});
  if (node["slots_per_trial"])
    r.slots_per_trial = w_.Int(node["slots_per_trial"], p + ".slots_per_trial", 1, "a positive integer");
  if (node["resource_pool"]) r.resource_pool = w_.String(node["resource_pool"], p + ".resource_pool", true);
  if (node["priority"]) {
    r.priority = w_.Int(node["priority"], p + ".priority", 1, "an integer from 1 to 99");
    if (r.priority > 99)
      w_.Fail(node["priority"],
              p + ".priority must be an integer from 1 to 99, got " + YamlWalker::Show(node["priority"]));
  }
  if (node["weight"]) {
    r.weight = w_.Double(node["weight"], p + ".weight");
    if (!(r.weight > 0))
      w_.Fail(node["weight"], p + ".weight must be positive, got " + YamlWalker::Show(node["weight"]));
  }
  if (node["max_slots"]) r.max_slots = w_.Int(node["max_slots"], p + ".max_slots", 1, "a positive integer");
  if (node["launch"]) {
    const std::string launch = w_.String(node["launch"], p + ".launch");
    if (auto mode = ParseLaunchMode(launch))
      r.launch = *mode;
    else
      w_.Fail(node["launch"], p + ".launch must be one of auto, per_slot, per_node, got \"" + launch + "\"");
  }
}

CheckpointStorageConfig ConfigParser::ParseCheckpointStorage(const YAML::Node& node) {
  const std::string p = "checkpoint_storage";
  CheckpointStorageConfig c;
  w_.RequireMap(node, p);
  w_.CheckKeys(
      node, p,
      {"type", "host_path", "storage_path", "save_experiment_best", "save_trial_best", "save_trial_latest"});
  if (node["type"]) {
    c.type = w_.String(node["type"], p + ".type");
    if (c.type != "shared_fs") w_.Fail(node["type"], p + ".type must be shared_fs, got \"" + c.type + "\"");
  }
  const auto host = w_.Required(node, p, "host_path");
  c.host_path = w_.String(host, p + ".host_path", true);
  if (c.host_path.front() != '/')
    w_.Fail(host, p + ".host_path must be an absolute path, got \"" + c.host_path + "\"");
  c.host_path_line = host.Mark().line + 1;
  for (const auto& part : std::filesystem::path(c.host_path))
    if (part == "..") w_.Fail(host, p + ".host_path must not contain \"..\", got \"" + c.host_path + "\"");
  if (node["storage_path"]) {
    const auto sub = node["storage_path"];
    c.storage_path = w_.String(sub, p + ".storage_path");
    c.storage_path_line = sub.Mark().line + 1;
    if (!c.storage_path.empty() && c.storage_path.front() == '/')
      w_.Fail(sub,
              p + ".storage_path must be a relative path below host_path, got \"" + c.storage_path + "\"");
    for (const auto& part : std::filesystem::path(c.storage_path))
      if (part == ".." || part == ".")
        w_.Fail(sub, p + ".storage_path must not contain \"" + part.string() + "\", got \"" + c.storage_path +
                         "\"");
  }
  for (auto [key, field] : {std::pair{"save_experiment_best", &c.save_experiment_best},
                            std::pair{"save_trial_best", &c.save_trial_best},
                            std::pair{"save_trial_latest", &c.save_trial_latest}})
    if (node[key]) *field = w_.Int(node[key], p + "." + key, 0, "an integer >= 0");
  return c;
}

void ConfigParser::ParseEnvironment(const YAML::Node& node, std::map<std::string, std::string>& out) {
  w_.RequireMap(node, "environment");
  w_.CheckKeys(node, "environment", {"variables"});
  const auto vars = node["variables"];
  if (!vars || vars.IsNull()) return;
  const std::string p = "environment.variables";
  if (vars.IsMap()) {
    for (const auto& [key, value] : w_.Entries(vars, p)) {
      if (key.empty() || key.find('=') != std::string::npos)
        w_.Fail(value, p + " has a bad variable name \"" + key + "\"");
      if (!value.IsScalar())
        w_.Fail(value, p + "." + key + " must be a string, got " + YamlWalker::Show(value));
      out[key] = value.Scalar();
    }
  } else if (vars.IsSequence()) {
    for (size_t i = 0; i < vars.size(); ++i) {
      const std::string item = w_.String(vars[i], p + "[" + std::to_string(i) + "]");
      const auto eq = item.find('=');
      if (eq == std::string::npos || eq == 0)
        w_.Fail(vars[i], p + "[" + std::to_string(i) + "] must read NAME=VALUE, got \"" + item + "\"");
      out[item.substr(0, eq)] = item.substr(eq + 1);
    }
  } else {
    w_.Fail(vars,
            p + " must be a map of NAME: value or a list of \"NAME=VALUE\", got " + YamlWalker::Show(vars));
  }
}

ExperimentConfig ConfigParser::Parse(const YAML::Node& root) {
  ExperimentConfig c;
  w_.set_document(root);
  if (!root.IsMap()) w_.Fail(root, "the config must be a map of keys, got " + YamlWalker::Show(root));
  w_.CheckKeys(root, "",
               {"name", "description", "labels", "entrypoint", "hyperparameters", "searcher", "resources",
                "max_restarts", "min_validation_period", "min_checkpoint_period", "checkpoint_storage",
                "reproducibility", "environment", "data", "preemption_timeout", "log_retention_days"});
  c.name = w_.String(w_.Required(root, "", "name"), "name", true);
  if (root["description"]) c.description = w_.String(root["description"], "description");
  if (const auto labels = root["labels"]; labels && !labels.IsNull()) {
    if (!labels.IsSequence())
      w_.Fail(labels, "labels must be a list of strings, got " + YamlWalker::Show(labels));
    for (size_t i = 0; i < labels.size(); ++i)
      c.labels.push_back(w_.String(labels[i], "labels[" + std::to_string(i) + "]", true));
  }
  c.entrypoint = w_.String(w_.Required(root, "", "entrypoint"), "entrypoint", true);
  if (const auto hp = root["hyperparameters"]; hp && !hp.IsNull()) {
    for (const auto& [key, value] : w_.Entries(hp, "hyperparameters"))
      c.hyperparameters[key] = ParseHparam(value, "hyperparameters." + key, 1);
  }
  ParseSearcher(w_.Required(root, "", "searcher"), c.searcher);
  if (c.searcher.name == "grid")
    for (const auto& [key, h] : c.hyperparameters)
      RequireGridCount(root["hyperparameters"][key], "hyperparameters." + key, h);
  if (root["resources"]) ParseResources(root["resources"], c.resources);
  if (root["max_restarts"])
    c.max_restarts = w_.Int(root["max_restarts"], "max_restarts", 0, "an integer >= 0");
  if (root["min_validation_period"])
    c.min_validation_period_batches =
        Batches(root["min_validation_period"], "min_validation_period", 0, "an integer >= 0");
  if (root["min_checkpoint_period"])
    c.min_checkpoint_period_batches =
        Batches(root["min_checkpoint_period"], "min_checkpoint_period", 0, "an integer >= 0");
  if (root["checkpoint_storage"]) c.checkpoint_storage = ParseCheckpointStorage(root["checkpoint_storage"]);
  if (const auto r = root["reproducibility"]; r) {
    w_.RequireMap(r, "reproducibility");
    w_.CheckKeys(r, "reproducibility", {"experiment_seed"});
    if (r["experiment_seed"])
      c.experiment_seed =
          w_.Int(r["experiment_seed"], "reproducibility.experiment_seed", 0, "an integer >= 0");
  }
  if (root["environment"]) ParseEnvironment(root["environment"], c.environment_variables);
  if (const auto d = root["data"]; d && !d.IsNull()) {
    w_.RequireMap(d, "data");
    c.data = w_.ToJson(d, "data");
  }
  if (root["preemption_timeout"])
    c.preemption_timeout_s =
        w_.Int(root["preemption_timeout"], "preemption_timeout", 1, "a positive number of seconds");
  if (root["log_retention_days"])
    c.log_retention_days = w_.Int(root["log_retention_days"], "log_retention_days", -1,
                                  "a number of days >= 0, or -1 to keep logs");
  return c;
}

nlohmann::json DefaultValue(const Hyperparameter& h) {
  switch (h.type) {
    case Type::kConst:
      return h.value;
    case Type::kInt:
      return static_cast<int64_t>(std::floor((h.minval + h.maxval) / 2));
    case Type::kDouble:
      return (h.minval + h.maxval) / 2;
    case Type::kLog:
      return std::pow(h.base, (h.minval + h.maxval) / 2);
    case Type::kCategorical:
      return h.vals.front();
    case Type::kNested:
      return DefaultHparams(h.nested);
  }
  return nullptr;
}

// Where the first byte that is not part of valid UTF-8 is (overlong forms,
// surrogates and code points past U+10FFFF included), if any.
std::optional<size_t> InvalidUtf8At(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    if (n == 0 || n > s.size() - i) return i;
    uint32_t cp = n == 1 ? c : c & (0x7fu >> n);
    for (size_t k = 1; k < n; ++k) {
      const auto cont = static_cast<unsigned char>(s[i + k]);
      if ((cont & 0xc0) != 0x80) return i;
      cp = (cp << 6) | (cont & 0x3fu);
    }
    if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff))
      return i;
    i += n;
  }
  return std::nullopt;
}

}  // namespace

Result<ExperimentConfig> ParseExperimentConfig(const std::string& yaml_text, const std::string& file_name) {
  // A syntax error found at the end of the text (an unclosed bracket or
  // quote) is marked on the line after the last one; name the last line.
  const int lines = std::max<int>(1, static_cast<int>(std::count(yaml_text.begin(), yaml_text.end(), '\n')) +
                                         (!yaml_text.empty() && yaml_text.back() != '\n' ? 1 : 0));
  auto at = [&](const YAML::Mark& mark) {
    return file_name + ":" + std::to_string(std::clamp(mark.line + 1, 1, lines)) + ": ";
  };
  // Configs travel and are stored as JSON strings, which hold only UTF-8.
  if (const auto bad = InvalidUtf8At(yaml_text)) {
    const auto line =
        1 + std::count(yaml_text.begin(), yaml_text.begin() + static_cast<std::ptrdiff_t>(*bad), '\n');
    return Status(ErrorCode::kInvalidConfig, file_name + ":" + std::to_string(line) +
                                                 ": the config is not UTF-8 text (save it as UTF-8)");
  }
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::DeepRecursion& e) {  // its own message is a misleading "bad file"
    return Status(ErrorCode::kInvalidConfig, at(e.mark) + "invalid YAML: nested too deeply");
  } catch (const YAML::Exception& e) {
    return Status(ErrorCode::kInvalidConfig, at(e.mark) + "invalid YAML: " + e.msg);
  }
  try {
    return ConfigParser(file_name).Parse(root);
  } catch (const ConfigError& e) {
    return Status(ErrorCode::kInvalidConfig, e.what());
  } catch (const YAML::Exception& e) {
    return Status(ErrorCode::kInvalidConfig, at(e.mark) + e.msg);
  } catch (const std::exception& e) {  // user input never takes a daemon down
    return Status(ErrorCode::kInvalidConfig, file_name + ": cannot read the config: " + e.what());
  }
}

nlohmann::json DefaultHparams(const std::map<std::string, Hyperparameter>& space) {
  auto out = nlohmann::json::object();
  for (const auto& [name, h] : space) out[name] = DefaultValue(h);
  return out;
}

}  // namespace ring
