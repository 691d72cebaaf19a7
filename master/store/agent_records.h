#pragma once
// Agents, their enrolments, and the Slurm jobs of allocations on Slurm
// pools, as the store keeps them.
#include <cstdint>
#include <string>
#include <vector>

#include "common/agent_slot.h"
#include "common/states.h"

namespace ring {

struct AgentRecord {
  std::string id;
  std::string pool;
  std::string address;
  AgentState state = AgentState::kConnected;
  std::vector<proto::Slot> slots;
  std::string registered_at;
  std::string last_seen_at;
  bool enabled = true;         // false: no new placements (set by SetAgentSchedulable)
  bool draining = false;       // disabled, letting running work finish
  bool runs_as_owner = false;  // runs tasks as their owners; false: single-user mode
};

// An agent id bound to its credential (agent_enrolments).
struct AgentEnrolmentRecord {
  std::string agent_id;
  std::string credential_hash;  // SHA-256 of the credential, hex
  std::string pool;             // the pool it enrolled in
  int64_t slots = 0;            // most slots its hellos may offer
  std::string enrolled_at;      // RFC 3339
  std::string revoked_at;       // empty while the credential is valid
};

// The Slurm job of a live allocation on a Slurm pool (slurm_jobs).
struct SlurmJobRecord {
  std::string allocation_id;
  int64_t job_id = 0;
  std::string pool;
  std::string credential_hash;  // SHA-256 of the credential its job's agents present, hex
  bool per_node = false;        // one process per node (per-node launch), else one per slot
  std::string created_at;       // RFC 3339, set by the store
};

}  // namespace ring
