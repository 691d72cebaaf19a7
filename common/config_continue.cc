#include "common/config_continue.h"

#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

namespace ring {
namespace {

// A JSON value as YAML (numbers keep their kind; objects stay maps).
YAML::Node ToYaml(const nlohmann::json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::object: {
      YAML::Node map(YAML::NodeType::Map);
      for (const auto& [k, v] : j.items()) map[k] = ToYaml(v);
      return map;
    }
    case nlohmann::json::value_t::array: {
      YAML::Node seq(YAML::NodeType::Sequence);
      for (const auto& v : j) seq.push_back(ToYaml(v));
      return seq;
    }
    case nlohmann::json::value_t::string:
      return YAML::Node(j.get<std::string>());
    case nlohmann::json::value_t::boolean:
      return YAML::Node(j.get<bool>());
    case nlohmann::json::value_t::number_integer:
      return YAML::Node(j.get<int64_t>());
    case nlohmann::json::value_t::number_unsigned:
      return YAML::Node(j.get<uint64_t>());
    case nlohmann::json::value_t::number_float:
      return YAML::Node(j.get<double>());
    default:
      return YAML::Node(YAML::NodeType::Null);
  }
}

// The trial's values as constants: a nested map stays a map of nested
// hyperparameters; null stays null (Determined's null hyperparameter); every
// other leaf, a list included, is `type: const`.
YAML::Node ConstHparams(const nlohmann::json& values) {
  YAML::Node out(YAML::NodeType::Map);
  for (const auto& [k, v] : values.items()) {
    if (v.is_object() && !v.empty()) {
      out[k] = ConstHparams(v);
      continue;
    }
    if (v.is_null()) {
      out[k] = YAML::Node(YAML::NodeType::Null);
      continue;
    }
    YAML::Node leaf(YAML::NodeType::Map);
    leaf["type"] = "const";
    leaf["val"] = ToYaml(v);
    out[k] = leaf;
  }
  return out;
}

Result<YAML::Node> LoadMap(const std::string& yaml, int64_t experiment_id) {
  YAML::Node node;
  try {
    node = YAML::Load(yaml);
  } catch (const YAML::Exception& e) {
    return Status(ErrorCode::kInvalidConfig,
                  "the config of experiment " + std::to_string(experiment_id) + " is not YAML: " + e.msg);
  }
  if (!node.IsMap())
    return Status(ErrorCode::kInvalidConfig,
                  "the config of experiment " + std::to_string(experiment_id) + " is not a map");
  return node;
}

// Sets how long `searcher` trains to `length` in the units of `old` (the
// parent's searcher): max_length keeps its unit (or stays bare); under the
// trial-driven contract max_time, in time_metric's units (batches when the
// parent named no length).
void SetLength(YAML::Node searcher, const YAML::Node& old, int64_t length) {
  const YAML::Node max_length = old.IsMap() ? old["max_length"] : YAML::Node();
  const bool by_time = old.IsMap() && old["time_metric"] && !old["time_metric"].IsNull();
  if (max_length && !max_length.IsNull() && !by_time) {
    searcher.remove("max_time");
    if (max_length.IsMap() && max_length.size() == 1) {  // {batches|records|epochs: N}
      YAML::Node unit(YAML::NodeType::Map);
      unit[max_length.begin()->first.as<std::string>()] = length;
      searcher["max_length"] = unit;
    } else {
      searcher["max_length"] = length;  // a bare length keeps its bare form
    }
    return;
  }
  searcher.remove("max_length");
  searcher["time_metric"] = by_time && old["time_metric"].IsScalar() ? old["time_metric"].as<std::string>()
                                                                     : std::string("batches");
  searcher["max_time"] = length;
}

std::string Emit(const YAML::Node& node) {
  YAML::Emitter out;
  out << node;
  return std::string(out.c_str()) + "\n";
}

}  // namespace

Result<std::string> WithSearcherLength(const std::string& config_yaml, int64_t experiment_id,
                                       int64_t length) {
  if (length < 1) return InvalidArgument("length must be a positive integer");
  auto loaded = LoadMap(config_yaml, experiment_id);
  if (!loaded.ok()) return loaded.status();
  YAML::Node config = *loaded;
  const YAML::Node old = YAML::Clone(config["searcher"]);
  if (!config["searcher"].IsMap()) config["searcher"] = YAML::Node(YAML::NodeType::Map);
  SetLength(config["searcher"], old, length);
  return Emit(config);
}

Result<std::string> ContinueConfig(const std::string& parent_yaml, const ContinueSource& source,
                                   int64_t length) {
  if (length < 1) return InvalidArgument("length must be a positive integer");
  auto loaded = LoadMap(parent_yaml, source.experiment_id);
  if (!loaded.ok()) return loaded.status();
  const YAML::Node parent = *loaded;
  YAML::Node config = YAML::Clone(parent);
  const YAML::Node old = parent["searcher"];
  auto text = [&](const char* key, const std::string& fallback) {
    return old.IsMap() && old[key] && old[key].IsScalar() ? old[key].as<std::string>() : fallback;
  };

  YAML::Node searcher(YAML::NodeType::Map);
  searcher["name"] = "single";
  searcher["metric"] = text("metric", "validation_loss");
  if (old.IsMap() && old["smaller_is_better"])
    searcher["smaller_is_better"] = YAML::Clone(old["smaller_is_better"]);
  SetLength(searcher, old, length);
  searcher["source_trial_id"] = source.trial_id;
  config["searcher"] = searcher;

  nlohmann::json values = nlohmann::json::parse(source.hparams_json, nullptr, false);
  if (!values.is_object()) values = nlohmann::json::object();
  config["hyperparameters"] = ConstHparams(values);
  config["reproducibility"]["experiment_seed"] = source.seed;
  config["description"] = "Continues trial " + std::to_string(source.trial_id) + " of experiment " +
                          std::to_string(source.experiment_id);
  return Emit(config);
}

}  // namespace ring
