#pragma once
// Why a pending request waits, in plain words for the job queue and the CLI.
// Pure text from numbers the pass already has; no decisions are made here.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "master/scheduler/scheduling_placement.h"

namespace ring::scheduling {

// Shape check of a request against a pool's agents (full and disabled ones
// included): nullopt if one agent is large enough or (unless it must stay on
// one agent) its slots are a multiple of some agent size; nullopt too when
// there are no agents to judge by.
std::optional<std::string> NeverFitsIn(const std::vector<AgentView>& agents, const Need& need,
                                       const std::string& pool);

// "experiment at max_slots (8)", or "needs 16 slots, more than the
// experiment's max_slots (8)".
std::string MaxSlotsReason(int slots, int max_slots);

// "waiting for preempted allocation 7.0 to stop", several named up to three.
std::string WaitingReason(const std::vector<std::string_view>& allocation_ids);

// "behind 3 higher-priority jobs" or "behind 2 jobs ahead of it in the queue".
std::string BehindReason(int holders_ahead, bool all_higher_priority);

// "; never on agent a1 (its log_policies matched an exclude_node pattern
// there)", several named up to three: added to a restricted request's reason.
std::string ExcludedReason(const std::vector<std::string>& agent_ids);

// "waits for an agent with a container runtime (environment.image): none of
// the 2 agents in pool default has one", or with the pool's runtime named.
std::string NoContainerAgentReason(const ContainerNeed& need, int agents, const std::string& pool);

// "; only on agents with a container runtime (1 of 3 in pool default)": added
// to the reason of a request that some agents cannot run.
std::string ContainerAgentsReason(const ContainerNeed& need, int capable, int agents,
                                  const std::string& pool);

// "at its fair share (2.67 of 8 slots)".
std::string AtShareReason(double share, int capacity);

// What the pool lacks right now: "needs 4 slots on one agent; largest free
// block in pool gpu is 2", "needs 2 whole idle agents of 4 slots; 1 is idle
// in pool gpu", ... A single-node request says so: "needs 4 slots on one
// agent (resources.is_single_node); ...". `idle_per_shape` counts physically
// idle enabled agents.
std::string ShapeReason(const PoolSlots& slots, const std::vector<int>& idle_per_shape, int largest_free,
                        const Need& need, const std::string& pool);

// Whether `need` would fit the physically free slots (holds ignored).
bool FitsPhysically(const PoolSlots& slots, const std::vector<int>& idle_per_shape, int largest_free,
                    const Need& need);

}  // namespace ring::scheduling
