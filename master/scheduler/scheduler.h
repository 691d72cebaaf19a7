#pragma once
// Scheduling decisions as pure functions: one pool's agents, pending requests
// and running allocations in; assignments, preemptions and pending reasons
// out. No I/O, no clock, no threads, no randomness: the same input gives the
// same decision whatever the order of its vectors. docs/scheduling.md has the
// rules with examples; in short:
//
// Gang. An allocation gets all its slots at once or none.
//
// Placement. A request that fits the free slots of one enabled agent goes to
// one agent: best fit takes the agent with the fewest free slots that still
// fit, worst fit the one with the most (ties by agent id); it gets the lowest
// free slot ids. A request no single agent can take now takes whole idle
// enabled agents of one shape (total slots and slot type), its slots a
// multiple of that size, the largest size first (fewest agents), the lowest
// agent ids first. A request larger than every agent and a multiple of no
// agent size can never fit (NeverFits says so).
//
// Single node. A request marked single_node (resources.is_single_node) takes
// one agent or nothing: never whole agents, and it can never fit when it is
// larger than every agent.
//
// priority policy. Priorities run 1..99, lower first; FIFO by queued_seq
// within a priority. A request that does not fit now, in order:
//  1. waits for slots of allocations already stopping (preempting, or chosen
//     as victims earlier in this pass) if those would make it fit, and holds
//     the agents it will take;
//  2. with preemption on, chooses victims among running preemptible
//     allocations of strictly lower priority (higher number): lowest priority
//     first, newest started first within a priority, taken in that order
//     until the request would fit; then only the victims on the agents it
//     will take are kept, and of those only as many as needed. If even every
//     eligible victim would not make it fit, nobody is preempted. It holds the
//     agents it will take;
//  3. otherwise, if it is the first blocked request of its priority, it holds
//     the agent(s) closest to fitting it (the most free slots). Requests later
//     in the pass (same or lower priority) may only use slots of agents nobody
//     holds: that is the backfill rule, so a blocked large request is not
//     starved by a stream of small ones while small ones still fill every
//     other agent.
//
// fair_share policy. The slots of the pool's enabled agents are divided
// between experiments with pending or running work in proportion to weight,
// max-min fair (water filling: an experiment whose demand is below its share
// keeps only its demand and the rest goes to the others). Experiments take
// turns, the one furthest below its share first; a request is tried while the
// experiment's slots plus the request stay within its share, or when the
// experiment has nothing running (so a small share never starves). Blocked
// requests wait, preempt and hold as above, with victims taken from
// experiments above their share, newest started first. Slots left over
// because shares round down go to requests beyond their share by the same
// turns, the experiment least over its share first (work conserving); those
// are the first reclaimed.
//
// max_slots. An experiment never runs more than max_slots slots.
//
// Excluded agents. A request with excluded_agents is tried as if those
// agents were not in the pool: it is not placed there, does not wait for
// their leaving slots, preempts nothing there and holds none of them.
//
// Containers. A request whose ranks run in a container (environment.image)
// is tried as if the agents that cannot run it were not in the pool, as for
// excluded agents: an agent can when it has a container runtime (the one the
// pool's container_runtime names, when it names one), or when the image is
// for the other slot type only. With no such agent in the pool it waits,
// saying so.
//
// Every pending request that is not assigned gets a reason in plain words.
#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/placement.h"

namespace ring {

struct AgentView {
  std::string id;
  std::string pool;
  std::string slot_type;        // "cpu" or "cuda"
  std::vector<int> free_slots;  // slot ids
  int total_slots = 0;
  bool enabled = true;  // false: keeps its running work, gets no new placements
  // The container runtimes it runs ranks with (podman, docker, apptainer,
  // singularity), from its hello; empty: none.
  std::vector<std::string> container_runtimes;
};

struct Assignment {
  std::string allocation_id;
  std::vector<Placement> placements;  // one per agent, the first holds rank 0
};

// How a pool schedules (master.yaml's resource_pools[].scheduler).
struct PoolPolicy {
  enum class Type { kPriority, kFairShare };
  enum class Fit { kBest, kWorst };  // best packs, worst spreads
  Type type = Type::kPriority;
  bool preemption = true;  // may a waiting request stop running work?
  Fit fit = Fit::kBest;
};

inline constexpr int kDefaultPriority = 42;

// What a request whose ranks run in a container asks of an agent.
struct ContainerNeed {
  std::string runtime;  // the pool's container_runtime; empty: any runtime
  bool cpu = true;      // an image for ranks on CPU slots (environment.image.cpu)
  bool cuda = true;     // an image for ranks on GPU slots (environment.image.cuda)
  auto operator<=>(const ContainerNeed&) const = default;
};

// Whether `agent` can run the ranks of a request that needs `need`: its
// slot type has no image (its ranks run on the host), or it has the runtime.
bool CanRunContainers(const AgentView& agent, const ContainerNeed& need);

// An allocation waiting for slots in this pool.
struct PendingRequest {
  std::string allocation_id;
  int64_t experiment_id = 0;
  int slots = 1;
  int priority = kDefaultPriority;  // 1 (runs first) .. 99; priority policy only
  double weight = 1;                // the experiment's fair-share weight (> 0)
  std::optional<int> max_slots;     // the experiment's cap on running slots
  int64_t queued_seq = 0;           // FIFO order (lower first)
  bool single_node = false;         // all slots on one agent (resources.is_single_node)
  // Agents this request is never placed on, nor waits for, nor preempts on
  // (its trial's log_policies matched an exclude_node pattern there).
  std::vector<std::string> excluded_agents;
  // Set when its ranks run in a container: placed only on agents that can
  // run them (CanRunContainers).
  std::optional<ContainerNeed> container;
  // One process holds all its slots (a task that is not a trial): on one
  // agent, as single_node, and its waiting reasons say so instead of naming
  // resources.is_single_node.
  bool one_process = false;
};

// An allocation holding slots in this pool (assigned, starting or running).
struct RunningAllocation {
  std::string allocation_id;
  int64_t experiment_id = 0;
  int slots = 0;
  int priority = kDefaultPriority;
  double weight = 1;
  std::optional<int> max_slots;
  int64_t started_seq = 0;  // higher = started later (preempted first)
  bool preemptible = true;
  bool preempting = false;            // already asked to stop: counts as going away
  std::vector<Placement> placements;  // where it runs; what preempting it frees
};

// Everything one pass over one pool needs. `agents` are this pool's agents,
// full and disabled ones included (their `pool` field is not consulted).
struct PoolInput {
  std::string pool;
  PoolPolicy policy;
  std::vector<AgentView> agents;
  std::vector<PendingRequest> pending;
  std::vector<RunningAllocation> running;
};

struct PoolDecision {
  std::vector<Assignment> assignments;                 // in the order decided
  std::vector<std::string> preempt;                    // allocation ids to ask to stop, in the order decided
  std::map<std::string, std::string> preempted_for;    // victim -> the request it makes room for
  std::map<std::string, std::string> pending_reasons;  // every pending request not assigned
  std::vector<std::string> order;                      // pending ids in scheduling order
};

// One pass over one pool: see the rules above.
PoolDecision SchedulePool(const PoolInput& input);

// Why a request of `slots` can never be placed on these agents (a pool's
// agents, full and disabled ones included), e.g. "can never fit: needs 12
// slots, a multiple of no agent size in pool default (agents have 8 slots)";
// nullopt if some shape takes it, or when there are no agents to judge by.
// Only shapes count, not how many agents are connected now. A `single_node`
// request fits only an agent of at least `slots` slots.
std::optional<std::string> NeverFits(const std::vector<AgentView>& pool_agents, int slots,
                                     bool single_node = false);

}  // namespace ring
