#pragma once
// The start messages of one node's ranks of a LaunchSpec, the same for
// every resource manager that runs ranks through agents (AgentRm, and the
// job agents of SlurmRm).
#include <string>
#include <vector>

#include "common/agent_protocol.h"
#include "master/rm/resource_manager.h"

namespace ring {

// Processes on a placement: one per slot, or one for the node (per-node launch).
int ProcessesOn(const LaunchSpec& spec, size_t node);
// The starts of placement `node` (spec.placements[node]); `node_addrs` are
// every placement's node address in order (the first is MASTER_ADDR);
// `slot_type` is the node's ("cpu" or "cuda").
std::vector<proto::Start> StartsForNode(const LaunchSpec& spec, size_t node,
                                        const std::vector<std::string>& node_addrs,
                                        const std::string& slot_type);

}  // namespace ring
