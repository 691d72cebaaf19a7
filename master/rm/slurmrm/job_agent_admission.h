#pragma once
// Who may speak for a Slurm job's node: a job agent connects with the id
// "slurm.<job id>.<node>" and the credential the master issued its
// allocation at Launch (only its SHA-256 is kept). The credential opens the
// channel of that job's nodes only, and the channel may report only that
// allocation's ranks. Pure: SlurmRm calls these under its lock, and the
// attack tests drive them directly.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/agent_protocol.h"
#include "master/rm/agent_peers.h"
#include "master/rm/agentrm/agent_refusal.h"

namespace ring {

struct JobAgentId {
  int64_t job_id = 0;
  std::string node;
};
std::optional<JobAgentId> ParseJobAgentId(std::string_view id);
std::string JobAgentIdFor(int64_t job_id, const std::string& node);

// What the master issued one allocation's job.
struct JobGrant {
  std::string allocation_id;
  std::string credential_hash;     // SHA-256 hex
  std::vector<std::string> nodes;  // the job's Slurm nodes
};

// nullopt when `credential` is the grant's and the id's node is one of its
// job's; `grant` is the grant of the id's job (null: no live allocation has
// that job).
std::optional<AgentRefusal> JudgeJobAgentClaim(const JobAgentId& id, std::string_view credential,
                                               const JobGrant* grant);

struct JobHelloVerdict {
  std::optional<AgentRefusal> refused;         // the connection is closed
  std::vector<proto::RunningProcess> running;  // its running ranks of this allocation only
  bool trimmed = false;                        // it listed ranks of another allocation
};
JobHelloVerdict JudgeJobAgentHello(const proto::Hello& hello, const std::string& authenticated_id,
                                   const std::string& allocation_id);

}  // namespace ring
