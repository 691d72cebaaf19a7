// The resources, environment and entrypoint sections of the experiment
// config: what a trial runs, where, and with which variables.
#include "common/config_parser.h"

namespace ring {
void ConfigParser::ParseResources(const YAML::Node& node, ResourcesConfig& r) {
  const std::string p = "resources";
  Keys(node, p,
       {"slots_per_trial", "resource_pool", "priority", "weight", "max_slots", "launch", "is_single_node"});
  Try(p + ".slots_per_trial", [&] {
    if (!Present(node["slots_per_trial"])) return;
    r.slots_per_trial = w_.Int(node["slots_per_trial"], p + ".slots_per_trial", 0, "a positive integer");
    if (r.slots_per_trial == 0)
      w_.Fail(
          node["slots_per_trial"],
          p + ".slots_per_trial 0 (a trial that holds no slot) is a Determined feature Ringmaster does not "
              "support yet: give 1 or more");
  });
  Try(p + ".resource_pool", [&] {
    // Determined's "" is the default pool.
    if (Present(node["resource_pool"])) {
      r.resource_pool = w_.String(node["resource_pool"], p + ".resource_pool");
      if (r.resource_pool.empty()) r.resource_pool = "default";
    }
  });
  Try(p + ".priority", [&] {
    if (!Present(node["priority"])) return;
    r.priority = w_.Int(node["priority"], p + ".priority", 1, "an integer from 1 to 99");
    if (r.priority > 99)
      w_.Fail(node["priority"],
              p + ".priority must be an integer from 1 to 99, got " + YamlWalker::Show(node["priority"]));
  });
  Try(p + ".weight", [&] {
    if (!Present(node["weight"])) return;
    r.weight = w_.Double(node["weight"], p + ".weight");
    if (!(r.weight > 0))
      w_.Fail(node["weight"], p + ".weight must be positive, got " + YamlWalker::Show(node["weight"]));
  });
  Try(p + ".max_slots", [&] {
    if (Present(node["max_slots"]))
      r.max_slots = w_.Int(node["max_slots"], p + ".max_slots", 1, "a positive integer");
  });
  Try(p + ".launch", [&] {
    if (!Present(node["launch"])) return;
    const std::string mode = w_.String(node["launch"], p + ".launch");
    if (mode == "auto")
      r.launch = LaunchMode::kAuto;
    else if (mode == "per_slot")
      r.launch = LaunchMode::kPerSlot;
    else if (mode == "per_node")
      r.launch = LaunchMode::kPerNode;
    else
      w_.Fail(node["launch"], p + ".launch must be one of auto, per_slot, per_node, got \"" + mode + "\"");
  });
  Try(p + ".is_single_node", [&] {
    if (!Present(node["is_single_node"])) return;
    r.is_single_node = w_.Bool(node["is_single_node"], p + ".is_single_node");
    r.is_single_node_line = node["is_single_node"].Mark().line + 1;
  });
}

void ConfigParser::ParseVariables(const YAML::Node& vars, const std::string& p,
                                  std::map<std::string, std::string>& out) {
  if (!Present(vars)) return;
  if (vars.IsMap()) {
    for (const auto& [key, value] : w_.Entries(vars, p)) {
      if (key.empty() || key.find('=') != std::string::npos) {
        w_.Error(value, p, p + " has a bad variable name \"" + key + "\"");
        continue;
      }
      if (!value.IsScalar()) {
        w_.Error(value, p + "." + key, p + "." + key + " must be a string, got " + YamlWalker::Show(value));
        continue;
      }
      out[key] = value.Scalar();
    }
  } else if (vars.IsSequence()) {
    for (size_t i = 0; i < vars.size(); ++i) {
      const std::string at = p + "[" + std::to_string(i) + "]";
      Try(at, [&] {
        const std::string item = w_.String(vars[i], at);
        const auto eq = item.find('=');
        if (eq == std::string::npos || eq == 0)
          w_.Fail(vars[i], at + " must read NAME=VALUE, got \"" + item + "\"");
        out[item.substr(0, eq)] = item.substr(eq + 1);
      });
    }
  } else {
    w_.Fail(vars,
            p + " must be a map of NAME: value or a list of \"NAME=VALUE\", got " + YamlWalker::Show(vars));
  }
}

void ConfigParser::ParseEnvironment(const YAML::Node& node, EnvironmentConfig& out) {
  const std::string p = "environment";
  Keys(node, p, {"variables", "environment_variables", "image", "registry_auth", "force_pull_image"});
  Try(p + ".image", [&] {
    if (Present(node["image"])) ParseImage(node["image"], out);
  });
  Try(p + ".registry_auth", [&] {
    if (Present(node["registry_auth"])) ParseRegistryAuth(node["registry_auth"], out);
  });
  Try(p + ".force_pull_image", [&] {
    if (Present(node["force_pull_image"]))
      out.force_pull_image = w_.Bool(node["force_pull_image"], p + ".force_pull_image");
  });
  Try(p + ".variables", [&] { ParseVariables(node["variables"], p + ".variables", out.variables); });
  const std::string d = p + ".environment_variables";
  Try(d, [&] {
    const auto vars = node["environment_variables"];
    if (!Present(vars)) return;
    if (!vars.IsMap()) return ParseVariables(vars, d, out.variables);
    // Determined's map form: lists per kind of slot.
    Keys(vars, d, {"cpu", "cuda", "gpu", "rocm"});
    for (const char* kind : {"cpu", "cuda", "gpu", "rocm"}) {
      const auto list = vars[kind];
      if (!Present(list)) continue;
      const std::string at = d + "." + kind;
      Try(at, [&] {
        if (!list.IsSequence())
          w_.Fail(list, at + " must be a list of \"NAME=VALUE\", got " + YamlWalker::Show(list));
        ParseVariables(list, at, std::string(kind) == "cpu" ? out.cpu_variables : out.cuda_variables);
      });
    }
  });
}

void ConfigParser::ParseEntrypoint(const YAML::Node& node, ExperimentConfig& c) {
  if (!node.IsSequence()) {
    c.entrypoint = w_.String(node, "entrypoint", true);
    return;
  }
  // The list form runs without a shell: argv as written.
  if (node.size() == 0) w_.Fail(node, "entrypoint must not be an empty list");
  for (size_t i = 0; i < node.size(); ++i) {
    const std::string at = "entrypoint[" + std::to_string(i) + "]";
    Try(at, [&] { c.entrypoint_argv.push_back(w_.String(node[i], at, i == 0)); });
  }
  for (const std::string& arg : c.entrypoint_argv) {
    if (!c.entrypoint.empty()) c.entrypoint += ' ';
    const bool plain = !arg.empty() && arg.find_first_of(" \t\n'\"\\$`;&|<>()*?[]{}~#!") == std::string::npos;
    if (plain) {
      c.entrypoint += arg;
      continue;
    }
    std::string quoted = "'";
    for (char ch : arg) quoted += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    c.entrypoint += quoted + "'";
  }
}

}  // namespace ring
