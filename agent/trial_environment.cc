#include "agent/trial_environment.h"

#include <unistd.h>

#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

extern char** environ;

namespace ring {
namespace {

template <typename T>
std::string Join(const std::vector<T>& items) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += ',';
    if constexpr (std::is_same_v<T, std::string>)
      out += item;
    else
      out += std::to_string(item);
  }
  return out;
}

}  // namespace

Environment BuildTrialEnvironment(const proto::Start& start, const std::string& master_url,
                                  const AgentIdentity& agent, const std::vector<proto::Slot>& agent_slots,
                                  const Environment& inherited) {
  Environment env = inherited;
  for (const auto& [name, value] : start.environment) env[name] = value;

  env["RING_MASTER_URL"] = master_url;
  env["RING_ALLOCATION_ID"] = start.allocation_id;
  env["RING_ALLOCATION_TOKEN"] = start.allocation_token;
  env["RING_TASK_ID"] = std::to_string(start.task_id);
  env["RING_TASK_KIND"] = std::string(ToString(start.task_kind));
  const bool trial = start.task_kind == TaskKind::kTrial;
  // A task that is not a trial has no experiment, searcher or checkpoint:
  // none of their variables, not even one from the agent's environment.
  for (const char* name : {"RING_TRIAL_ID", "RING_EXPERIMENT_ID", "RING_HPARAMS"}) env.erase(name);
  if (trial) {
    env["RING_TRIAL_ID"] = std::to_string(start.trial_id);
    env["RING_EXPERIMENT_ID"] = std::to_string(start.experiment_id);
    env["RING_HPARAMS"] = start.hparams_json.empty() ? "{}" : start.hparams_json;
  }
  if (start.latest_checkpoint.empty() || !trial) {
    env.erase("RING_LATEST_CHECKPOINT");  // never leak one from the agent's own environment
  } else {
    env["RING_LATEST_CHECKPOINT"] = start.latest_checkpoint;
  }
  env["WORLD_SIZE"] = std::to_string(start.world_size);
  env["LOCAL_WORLD_SIZE"] = std::to_string(start.local_world_size);
  env["MASTER_ADDR"] = start.master_addr;
  env["MASTER_PORT"] = std::to_string(start.master_port);
  const auto nodes = std::max<size_t>(start.node_addrs.size(), 1);
  if (start.per_node) {
    // One process for this node's slots: what torchrun's launcher reads. The
    // workers it starts get RANK and LOCAL_RANK from it, not from here.
    env.erase("RANK");
    env.erase("LOCAL_RANK");
    env["NODE_RANK"] = std::to_string(start.node_rank);
    env["GROUP_RANK"] = std::to_string(start.node_rank);
    env["NNODES"] = std::to_string(nodes);
  } else {
    env["RANK"] = std::to_string(start.rank);
    env["LOCAL_RANK"] = std::to_string(start.local_rank);
  }
  // This process's node, under either launch (Determined's cluster info).
  env["RING_SLOT_IDS"] = Join(start.slot_ids);
  env["RING_CONTAINER_ADDRS"] = Join(start.node_addrs);
  env["RING_CONTAINER_SLOT_COUNTS"] = Join(start.node_slot_counts);
  env["RING_CONTAINER_RANK"] = std::to_string(start.node_rank);
  env["RING_LAUNCH"] = start.per_node ? "per_node" : "per_slot";
  env["RING_AGENT_ID"] = agent.id;
  env["RING_AGENT_ADDR"] = agent.address;
  // The trial runtime verifies an https master with the agent's CA file too.
  if (!agent.ca_file.empty()) env["RING_CA_FILE"] = agent.ca_file;
  // The runtime's `determined` package first, so that one installed for the
  // trial's interpreter cannot shadow it; the experiment's PYTHONPATH follows.
  if (!agent.python_dir.empty()) {
    auto own = env.find("PYTHONPATH");
    env["PYTHONPATH"] =
        agent.python_dir + (own != env.end() && !own->second.empty() ? ":" + own->second : "");
  }

  std::string devices;
  if (start.slot_type == "cuda") {
    for (int id : start.slot_ids) {
      std::string device = std::to_string(id);
      for (const auto& slot : agent_slots) {
        if (slot.id == id && !slot.uuid.empty()) device = slot.uuid;
      }
      if (!devices.empty()) devices += ',';
      devices += device;
    }
  }
  env["CUDA_VISIBLE_DEVICES"] = devices;
  return env;
}

Environment AllowedAgentEnvironment(const Environment& agent) {
  Environment env;
  for (const auto& [name, value] : agent) {
    if (name == "PATH" || name == "LANG" || name == "TZ" || name.rfind("LC_", 0) == 0) env[name] = value;
  }
  if (env.count("PATH") == 0) env["PATH"] = "/usr/local/bin:/usr/bin:/bin";
  return env;
}

Environment CurrentEnvironment() {
  Environment env;
  for (char** e = environ; e && *e; ++e) {
    std::string entry(*e);
    auto eq = entry.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    env.emplace(entry.substr(0, eq), entry.substr(eq + 1));
  }
  return env;
}

std::vector<std::string> ToEnvp(const Environment& env) {
  std::vector<std::string> out;
  out.reserve(env.size());
  for (const auto& [name, value] : env) out.push_back(name + "=" + value);
  return out;
}

}  // namespace ring
