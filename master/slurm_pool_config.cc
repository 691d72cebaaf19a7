#include "master/slurm_pool_config.h"

#include "master/rm/slurmrm/slurm_rest_job.h"

namespace ring {

Status YamlKeyError(const std::string& path, const YAML::Node& node, const std::string& what) {
  return InvalidArgument(path + ":" + std::to_string(node.Mark().line + 1) + ": " + what);
}

namespace {

// resource_manager.rest: {url, user, jwt_key_file, api_version, ca_file,
// output_dir, token_lifespan_s}.
Status ParseRest(const std::string& path, const YAML::Node& node, const std::string& name,
                 SlurmRestOptions& rest) {
  if (!node.IsMap())
    return YamlKeyError(path, node, name + " must be a map of url, user, jwt_key_file and more");
  for (const auto& kv : node) {
    const auto key = kv.first.as<std::string>();
    const auto& v = kv.second;
    const std::string at = name + "." + key;
    if (key == "token_lifespan_s") {
      int64_t seconds = 0;
      try {
        seconds = v.as<int64_t>();
      } catch (const YAML::Exception&) {
        return YamlKeyError(path, v, at + " must be an integer");
      }
      if (seconds < 30 || seconds > 86400) return YamlKeyError(path, v, at + " must be from 30 to 86400");
      rest.token_lifespan = std::chrono::seconds(seconds);
      continue;
    }
    if (key != "url" && key != "user" && key != "jwt_key_file" && key != "api_version" && key != "ca_file" &&
        key != "output_dir")
      return YamlKeyError(path, kv.first, "unknown key \"" + at + "\"");
    if (!v.IsScalar() || v.as<std::string>().empty())
      return YamlKeyError(path, v, at + " must be a non-empty string");
    const std::string text = v.as<std::string>();
    if ((key == "jwt_key_file" || key == "ca_file" || key == "output_dir") && text.front() != '/')
      return YamlKeyError(path, v, at + " must be an absolute path, got \"" + text + "\"");
    if (key == "url") {
      if (text.rfind("http://", 0) != 0 && text.rfind("https://", 0) != 0)
        return YamlKeyError(path, v, at + " must start with http:// or https://, got \"" + text + "\"");
      rest.url = text;
    } else if (key == "user") {
      if (text == "root")
        return YamlKeyError(path, v, at + " must not be root: slurmrestd refuses root's tokens");
      rest.user = text;
    } else if (key == "api_version") {
      if (text.size() < 6 || text.rfind("v0.0.", 0) != 0)
        return YamlKeyError(path, v, at + " must be an OpenAPI version of Slurm such as v0.0.38");
      rest.api_version = text;
    } else if (key == "jwt_key_file") {
      rest.jwt_key_file = text;
    } else if (key == "ca_file") {
      rest.ca_file = text;
    } else {
      rest.output_dir = text;
    }
  }
  if (rest.url.empty() || rest.user.empty() || rest.jwt_key_file.empty())
    return YamlKeyError(path, node,
                        name +
                            " needs url (slurmrestd), user (the account the master reads nodes and jobs as) "
                            "and jwt_key_file (the key slurmctld checks tokens with)");
  return Status::Ok();
}

}  // namespace

// resource_pools[].resource_manager: {type: agent} (the default) or
// {type: slurm, partition, account, qos, sbatch_args, slots_per_node,
// slot_type, agent_binary, master_url, agent_ca_file, job_dir, poll_interval_ms,
// agent_connect_timeout_ms, submit_helper, submit_helper_config,
// single_identity, nice_per_priority, priority_qos, container_runtime, rest}.
Status ParseResourceManager(const std::string& path, const YAML::Node& node, const std::string& at,
                            std::optional<SlurmPoolOptions>& slurm) {
  const std::string rm = at + ".resource_manager";
  if (!node.IsMap()) return YamlKeyError(path, node, rm + " must be a map with a type (agent or slurm)");
  const YAML::Node type = node["type"];
  const std::string type_text = type && type.IsScalar() ? type.as<std::string>() : "";
  if (type_text != "agent" && type_text != "slurm")
    return YamlKeyError(path, type ? type : node,
                        rm + ".type must be agent or slurm, got \"" + type_text + "\"");
  SlurmPoolOptions o;
  for (const auto& kv : node) {
    const auto key = kv.first.as<std::string>();
    const auto& v = kv.second;
    if (key == "type") continue;
    if (type_text == "agent")
      return YamlKeyError(path, kv.first,
                          "unknown key \"" + rm + "." + key + "\" (a pool of agents takes only type)");
    const std::string name = rm + "." + key;
    try {
      if (key == "partition" || key == "account" || key == "qos" || key == "agent_binary" ||
          key == "master_url" || key == "job_dir" || key == "agent_ca_file" || key == "submit_helper" ||
          key == "submit_helper_config" || key == "container_runtime") {
        if (!v.IsScalar() || v.as<std::string>().empty())
          return YamlKeyError(path, v, name + " must be a non-empty string");
        const std::string text = v.as<std::string>();
        if (key == "partition") o.partition = text;
        if (key == "account") o.account = text;
        if (key == "qos") o.qos = text;
        if (key == "agent_binary") o.agent_binary = text;
        if (key == "master_url") o.master_url = text;
        if (key == "job_dir") o.job_dir = text;
        if (key == "agent_ca_file") o.agent_ca_file = text;
        if (key == "submit_helper") o.submit_helper = text;
        if (key == "submit_helper_config") o.submit_helper_config = text;
        if (key == "container_runtime") {
          if (text != "podman" && text != "docker" && text != "apptainer" && text != "singularity")
            return YamlKeyError(
                path, v,
                name + " must be one of podman, docker, apptainer, singularity, got \"" + text + "\"");
          o.container_runtime = text;
        }
        if ((key == "agent_binary" || key == "job_dir" || key == "agent_ca_file" || key == "submit_helper" ||
             key == "submit_helper_config") &&
            text.front() != '/')
          return YamlKeyError(path, v,
                              name + " must be an absolute path as the nodes see it, got \"" + text + "\"");
        if (key == "master_url" && text.rfind("http://", 0) != 0 && text.rfind("https://", 0) != 0)
          return YamlKeyError(path, v, name + " must start with http:// or https://, got \"" + text + "\"");
      } else if (key == "sbatch_args") {
        if (!v.IsSequence()) return YamlKeyError(path, v, name + " must be a list of sbatch options");
        for (const auto& a : v) {
          const std::string arg = a.IsScalar() ? a.as<std::string>() : "";
          if (arg.empty() || arg.front() != '-')
            return YamlKeyError(path, a,
                                name + " must hold sbatch options starting with -, got \"" + arg + "\"");
          if (const std::string reserved = ReservedSbatchOption(arg); !reserved.empty())
            return YamlKeyError(
                path, a,
                name + ": " + reserved +
                    " is set by the resource manager from the allocation and the pool's settings");
          o.sbatch_args.push_back(arg);
        }
      } else if (key == "rest") {
        if (Status s = ParseRest(path, v, name, o.rest); !s.ok()) return s;
      } else if (key == "single_identity") {
        o.single_identity = v.as<bool>();
      } else if (key == "nice_per_priority") {
        o.nice_per_priority = v.as<int64_t>();
        if (o.nice_per_priority < 0 || o.nice_per_priority > 100000)
          return YamlKeyError(path, v, name + " must be from 0 (no --nice) to 100000");
      } else if (key == "priority_qos") {
        if (!v.IsSequence()) return YamlKeyError(path, v, name + " must be a list of {max_priority, qos}");
        int64_t last = 0;
        for (const auto& band : v) {
          if (!band.IsMap() || !band["max_priority"] || !band["qos"] || band.size() != 2)
            return YamlKeyError(path, band, name + " must hold maps of max_priority and qos only");
          SlurmPoolOptions::QosBand b{band["max_priority"].as<int64_t>(), band["qos"].as<std::string>()};
          if (b.max_priority < 1 || b.max_priority > 99 || b.max_priority <= last || b.qos.empty())
            return YamlKeyError(path, band,
                                name +
                                    ": max_priority must be from 1 to 99, growing from band to band, and qos "
                                    "a QOS name");
          last = b.max_priority;
          o.priority_qos.push_back(std::move(b));
        }
      } else if (key == "slots_per_node") {
        o.slots_per_node = v.as<int64_t>();
        if (o.slots_per_node < 0 || o.slots_per_node > 4096)
          return YamlKeyError(path, v, name + " must be from 0 (as Slurm reports the node) to 4096");
      } else if (key == "slot_type") {
        const std::string text = v.IsScalar() ? v.as<std::string>() : "";
        if (text != "cuda" && text != "cpu")
          return YamlKeyError(path, v, name + " must be cuda or cpu, got \"" + text + "\"");
        o.slot_type = text == "cpu" ? SlurmSlotType::kCpu : SlurmSlotType::kCuda;
      } else if (key == "poll_interval_ms" || key == "agent_connect_timeout_ms") {
        const int64_t ms = v.as<int64_t>();
        if (ms < 100 || ms > 3600000) return YamlKeyError(path, v, name + " must be from 100 to 3600000");
        (key == "poll_interval_ms" ? o.poll_interval : o.agent_connect_timeout) =
            std::chrono::milliseconds(ms);
      } else {
        return YamlKeyError(path, kv.first, "unknown key \"" + name + "\"");
      }
    } catch (const YAML::Exception&) {
      return YamlKeyError(
          path, v, name + (key == "single_identity" ? " must be true or false" : " must be an integer"));
    }
  }
  if (type_text == "agent") return Status::Ok();
  if (o.partition.empty()) return YamlKeyError(path, node, rm + ".partition is required for a slurm pool");
  if (o.agent_binary.empty())
    return YamlKeyError(
        path, node,
        rm + ".agent_binary is required for a slurm pool: the ringagent binary as the nodes see it");
  if (o.uses_rest() && (!o.submit_helper.empty() || o.single_identity))
    return YamlKeyError(path, node,
                        rm +
                            ": rest (jobs run as their owners through slurmrestd) excludes submit_helper and "
                            "single_identity");
  if (o.uses_rest())
    for (const auto& arg : o.sbatch_args)
      if (auto field = RestJobField(arg); !field.ok())
        return YamlKeyError(path, node, rm + ".sbatch_args: " + field.status().message());
  if (o.submit_helper.empty() && !o.single_identity && !o.uses_rest())
    return YamlKeyError(
        path, node,
        rm + ": say whose account runs the jobs: submit_helper (the root-owned ring-slurm-submit: each "
             "job runs as its owner's linked Unix account), rest (slurmrestd with per-user tokens: the same) "
             "or "
             "single_identity: true (every job runs as "
             "the master's own account, and users' trials can read each other's files; see "
             "docs/slurm.md)");
  if (!o.submit_helper.empty() && o.single_identity)
    return YamlKeyError(path, node, rm + ": submit_helper and single_identity: true exclude each other");
  if (!o.submit_helper.empty())
    for (const auto& arg : o.sbatch_args)
      if (arg.rfind("--", 0) != 0)
        return YamlKeyError(
            path, node,
            rm +
                ".sbatch_args: with a submit_helper each option is one --name or --name=value, "
                "got \"" +
                arg + "\"");
  slurm = std::move(o);
  return Status::Ok();
}

}  // namespace ring
