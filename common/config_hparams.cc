// The hyperparameters section of the experiment config, and the default
// values a `single` trial uses.
#include <cmath>
#include <cstdint>

#include "common/config_parser.h"

namespace ring {

using Type = Hyperparameter::Type;

Hyperparameter ConfigParser::ParseHparam(const YAML::Node& node, const std::string& path, int depth) {
  Hyperparameter h;
  if (!node.IsMap()) {  // a scalar, a list or null (Determined allows null) is a constant
    h.type = Type::kConst;
    h.value = w_.ToJson(node, path, depth);
    return h;
  }
  if (!node["type"]) {  // a map without `type` nests hyperparameters
    h.type = Type::kNested;
    for (const auto& [key, value] : w_.Entries(node, path, depth)) {
      const std::string child = YamlWalker::Join(path, key);
      Try(child, [&, key = key, value = value] { h.nested[key] = ParseHparam(value, child, depth + 1); });
    }
    return h;
  }
  const std::string type = w_.String(node["type"], path + ".type");
  if (type == "const") {
    Keys(node, path, {"type", "val"});
    h.type = Type::kConst;
    h.value = w_.ToJson(w_.Required(node, path, "val"), path + ".val", depth + 1);
  } else if (type == "int" || type == "double" || type == "log") {
    if (type == "log")
      Keys(node, path, {"type", "minval", "maxval", "base", "count"});
    else
      Keys(node, path, {"type", "minval", "maxval", "count"});
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
    Keys(node, path, {"type", "vals"});
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

namespace {

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

}  // namespace

nlohmann::json DefaultHparams(const std::map<std::string, Hyperparameter>& space) {
  auto out = nlohmann::json::object();
  for (const auto& [name, h] : space) out[name] = DefaultValue(h);
  return out;
}

}  // namespace ring
