#pragma once
// Placement decisions as a pure function: agents with free slots and pending
// requests in, assignments out. No I/O, no clock, no locks.
//
// This version places FIFO by request order, gang-style (all slots or none),
// best-fit on one agent (the agent with the fewest free slots that still
// fits), and, for requests larger than any agent, whole idle agents of one
// slot type, fewest agents first.
#include <cstdint>
#include <string>
#include <vector>

namespace ring {

struct AgentView {
  std::string id;
  std::string pool;
  std::string slot_type;        // "cpu" or "cuda"
  std::vector<int> free_slots;  // slot ids
  int total_slots = 0;
};

struct SlotRequest {
  std::string allocation_id;
  std::string pool;
  int slots = 1;
};

struct Placement {
  std::string agent_id;
  std::vector<int> slot_ids;
};

struct Assignment {
  std::string allocation_id;
  std::vector<Placement> placements;  // one per agent, the first holds rank 0
};

std::vector<Assignment> Schedule(std::vector<AgentView> agents, const std::vector<SlotRequest>& pending);

// Why a request cannot be placed now (for the job queue), e.g.
// "waiting for 4 free slots in pool default; the most free on one agent is 2".
std::string PendingReason(const std::vector<AgentView>& agents, const SlotRequest& request);

}  // namespace ring
