#include "master/rm/rank_starts.h"

namespace ring {

int ProcessesOn(const LaunchSpec& spec, size_t node) {
  return spec.launch == LaunchMode::kPerNode ? 1 : static_cast<int>(spec.placements[node].slot_ids.size());
}

std::vector<proto::Start> StartsForNode(const LaunchSpec& spec, size_t node,
                                        const std::vector<std::string>& node_addrs,
                                        const std::string& slot_type) {
  const bool per_node = spec.launch == LaunchMode::kPerNode;
  int rank = 0;
  for (size_t before = 0; before < node; ++before) rank += ProcessesOn(spec, before);
  std::vector<int> node_slot_counts;
  for (const auto& p : spec.placements) node_slot_counts.push_back(static_cast<int>(p.slot_ids.size()));
  const auto& p = spec.placements[node];
  std::vector<proto::Start> starts;
  for (int local = 0; local < ProcessesOn(spec, node); ++local, ++rank) {
    proto::Start start;
    start.allocation_id = spec.allocation_id;
    start.allocation_token = spec.token;
    start.trial_id = spec.trial_id;
    start.experiment_id = spec.experiment_id;
    start.task_id = spec.task_id;
    start.task_kind = spec.task_kind;
    // A shell's rank runs in a terminal that its owner attaches to.
    start.terminal = spec.task_kind == TaskKind::kShell;
    start.rank = rank;
    start.world_size = spec.world_size;
    start.local_rank = local;
    start.local_world_size = static_cast<int>(p.slot_ids.size());
    start.master_addr = node_addrs.empty() ? "127.0.0.1" : node_addrs.front();
    start.master_port = spec.master_port;
    start.slot_ids = per_node ? p.slot_ids : std::vector<int>{p.slot_ids[static_cast<size_t>(local)]};
    start.per_node = per_node;
    start.node_rank = static_cast<int>(node);
    start.node_addrs = node_addrs;
    start.node_slot_counts = node_slot_counts;
    start.slot_type = slot_type;
    start.entrypoint = spec.entrypoint;
    start.entrypoint_argv = spec.entrypoint_argv;
    start.hparams_json = spec.hparams_json;
    start.environment = spec.environment;
    for (const auto& [k, v] : slot_type == "cpu" ? spec.cpu_environment : spec.cuda_environment)
      start.environment[k] = v;
    start.latest_checkpoint = spec.latest_checkpoint;
    start.model_definition_path = spec.model_definition_path;
    start.owner = spec.owner;
    start.run_as = spec.run_as;
    start.container = slot_type == "cpu" ? spec.cpu_container : spec.cuda_container;
    starts.push_back(std::move(start));
  }
  return starts;
}

}  // namespace ring
