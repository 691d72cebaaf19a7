#pragma once
// The "hierarchical" backend: ranks on one agent reduce through shared
// memory (ShmLocalGroup), the agents' leaders (local rank 0) run Gloo
// between them, and the result goes back through shared memory.
#include <memory>

#include "distributed/backend.h"
#include "ring/trial/distributed.h"

namespace ring::trial::detail {

// Connects this rank's shared-memory group, the leaders' Gloo group
// "<name>/leaders" (leaders only, rank = agent index) and a Gloo group of
// every rank "<name>/all" (allgather). Throws ConfigError for an
// inconsistent topology, RendezvousError when a peer does not join in time.
std::unique_ptr<ProcessGroup> ConnectHierarchical(const GroupPlan& plan);

}  // namespace ring::trial::detail
