#pragma once
// Pure decisions on what an agent presents: its enrolment request, the
// headers of its WebSocket upgrade, and its hello, each judged against what
// the master recorded (its enrolment, the ranks it placed there). No
// sockets, no store, no clock: AgentEnrolments and AgentRm call these under
// their locks, and fuzz/fuzz_agent_enrolment.cc drives them with any bytes.
//
// The agent channel's authentication:
//   enrolment  POST /api/v1/agents/enrol, "Authorization: Bearer <cluster
//              token>", body {"agent_id", "pool", "slots"}; answered with the
//              id's own credential, once.
//   upgrade    GET /api/v1/agents/ws with "Authorization: Bearer
//              <credential>" and "X-Ring-Agent-Id: <id>"; anything else is a
//              401 before the upgrade, and a live connection of that id is
//              left alone.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/agent_protocol.h"
#include "common/status.h"
#include "master/rm/agentrm/agent_refusal.h"

namespace ring {

inline constexpr std::string_view kAgentIdHeader = "X-Ring-Agent-Id";
inline constexpr size_t kMaxAgentIdLength = 128;
inline constexpr int64_t kMaxEnrolledSlots = 4096;

// 1 to 128 letters, digits, '-', '_' and '.'; not "." or "..".
Status CheckAgentId(std::string_view id);

struct EnrolRequest {
  std::string agent_id;
  std::string pool = "default";
  int64_t slots = 0;
};
// The JSON body of POST /api/v1/agents/enrol; errors name the field.
Result<EnrolRequest> ParseEnrolRequest(std::string_view body);

// What an upgrade presents: the agent id header and the bearer credential.
struct AgentClaim {
  std::string agent_id;
  std::string credential;
};
// kUnauthenticated (naming what is missing) unless both are there and the
// id is well-formed.
Result<AgentClaim> ParseAgentClaim(std::string_view authorization, std::string_view agent_id);

// An id's enrolment, as AgentEnrolments keeps it.
struct Enrolment {
  std::string credential_hash;  // SHA-256 hex
  std::string pool;
  int64_t slots = 0;
  std::string enrolled_at;
  bool revoked = false;
};

// Whether `claim` may open the channel of its id: nullopt when its credential
// matches the id's valid enrolment (`enrolled`, null when there is none).
std::optional<AgentRefusal> JudgeClaim(const AgentClaim& claim, const Enrolment* enrolled);
// Whether an enrolment of `agent_id` may go ahead given its present record.
std::optional<AgentRefusal> JudgeEnrolment(const Enrolment* enrolled);

// allocation id -> ranks the master placed on one agent.
using PlacedRanks = std::map<std::string, std::set<int>>;

struct HelloVerdict {
  // Set: the connection is closed and nothing of the hello is used.
  std::optional<AgentRefusal> refused;
  // Otherwise: the hello as admitted, slots cut to the enrolled count and
  // running ranks of allocations placed here but not on these ranks left out.
  proto::Hello admitted;
  // What was cut (each also counted).
  std::vector<AgentRefusal> trimmed;
};
// Judges a hello that came over a connection authenticated as
// `authenticated_id`; `placed` are the ranks the master placed on it and
// `live` says whether an allocation holds slots anywhere. Running entries of
// allocations not placed on this agent stay (the lifecycle answers them with
// a kill on this agent only: an ended allocation is fenced out); those of a
// live allocation placed elsewhere are counted as kForeignRunning too.
HelloVerdict JudgeHello(const proto::Hello& hello, const std::string& authenticated_id,
                        const Enrolment& enrolment, const PlacedRanks& placed,
                        const std::function<bool(const std::string& allocation_id)>& live);

}  // namespace ring
