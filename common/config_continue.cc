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

}  // namespace

Result<std::string> ContinueConfig(const std::string& parent_yaml, const ContinueSource& source,
                                   int64_t length) {
  if (length < 1) return InvalidArgument("length must be a positive integer");
  YAML::Node parent;
  try {
    parent = YAML::Load(parent_yaml);
  } catch (const YAML::Exception& e) {
    return Status(
        ErrorCode::kInvalidConfig,
        "the config of experiment " + std::to_string(source.experiment_id) + " is not YAML: " + e.msg);
  }
  if (!parent.IsMap())
    return Status(ErrorCode::kInvalidConfig,
                  "the config of experiment " + std::to_string(source.experiment_id) + " is not a map");
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
  const YAML::Node max_length = old.IsMap() ? old["max_length"] : YAML::Node();
  const bool by_time = old.IsMap() && old["time_metric"] && !old["time_metric"].IsNull();
  if (max_length && !max_length.IsNull() && !by_time) {
    if (max_length.IsMap() && max_length.size() == 1) {  // {batches|records|epochs: N}
      YAML::Node unit(YAML::NodeType::Map);
      unit[max_length.begin()->first.as<std::string>()] = length;
      searcher["max_length"] = unit;
    } else {
      searcher["max_length"] = length;  // a bare length keeps its bare form
    }
  } else {  // trial-driven: the trial reads its length as max_time
    searcher["time_metric"] = text("time_metric", "batches");
    searcher["max_time"] = length;
  }
  searcher["source_trial_id"] = source.trial_id;
  config["searcher"] = searcher;

  nlohmann::json values = nlohmann::json::parse(source.hparams_json, nullptr, false);
  if (!values.is_object()) values = nlohmann::json::object();
  config["hyperparameters"] = ConstHparams(values);
  config["reproducibility"]["experiment_seed"] = source.seed;
  config["description"] = "Continues trial " + std::to_string(source.trial_id) + " of experiment " +
                          std::to_string(source.experiment_id);
  YAML::Emitter out;
  out << config;
  return std::string(out.c_str()) + "\n";
}

}  // namespace ring
