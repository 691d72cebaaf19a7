#include "agent/agent_config_file.h"

#include <string_view>

#include <yaml-cpp/yaml.h>

namespace ring {
namespace {

Status KeyError(const std::string& path, const YAML::Node& node, const std::string& what) {
  return InvalidArgument(path + ":" + std::to_string(node.Mark().line + 1) + ": " + what);
}

}  // namespace

Status LoadAgentConfigFile(const std::string& path, AgentConfig& config, std::string& log_format) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    return InvalidArgument(path + ": " + e.what());
  }
  if (root.IsNull()) return Status::Ok();
  if (!root.IsMap()) return InvalidArgument(path + ": the top level must be a map of settings");
  for (const auto& kv : root) {
    const auto key = kv.first.as<std::string>();
    const auto& v = kv.second;
    try {
      if (key == "master")
        config.master_url = v.as<std::string>();
      else if (key == "id")
        config.id = v.as<std::string>();
      else if (key == "pool")
        config.pool = v.as<std::string>();
      else if (key == "cpu_slots")
        config.cpu_slots = v.as<int>();
      else if (key == "gpus")
        config.detect_gpus = v.as<bool>();
      else if (key == "work_dir")
        config.work_dir = v.as<std::string>();
      else if (key == "token_file")
        config.token_file = v.as<std::string>();
      else if (key == "state_dir")
        config.state_dir = v.as<std::string>();
      else if (key == "ca_file")
        config.ca_file = v.as<std::string>();
      else if (key == "address")
        config.address = v.as<std::string>();
      else if (key == "log_level")
        config.log_level = v.as<std::string>();
      else if (key == "log_format")
        log_format = v.as<std::string>();
      else if (key == "shutdown_grace_ms")
        config.shutdown_grace = std::chrono::milliseconds(v.as<int64_t>());
      else if (key == "single_user")
        config.single_user = v.as<bool>();
      else if (key == "unlinked_user")
        config.unlinked_user = v.as<std::string>();
      else if (key == "allow_root_trials")
        config.allow_root_trials = v.as<bool>();
      else if (key == "containment")
        config.containment = v.as<std::string>();
      else if (key == "container_runtimes")
        config.container_runtimes = v.as<std::string>();
      else if (key == "python_dir")
        config.python_dir = v.as<std::string>();
      else
        return KeyError(path, kv.first,
                        "unknown key \"" + key +
                            "\" (known: master, id, pool, cpu_slots, gpus, work_dir, token_file, state_dir, "
                            "ca_file, address, log_level, log_format, shutdown_grace_ms, single_user, "
                            "unlinked_user, allow_root_trials, containment, container_runtimes, python_dir)");
    } catch (const YAML::Exception&) {
      return KeyError(path, v, key + " has the wrong type");
    }
  }
  return Status::Ok();
}

std::string ConfigFileArgument(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--config" && i + 1 < argc) return argv[i + 1];
    if (arg.rfind("--config=", 0) == 0) return std::string(arg.substr(9));
  }
  return {};
}

}  // namespace ring
