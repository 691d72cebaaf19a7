#pragma once
// Why the master refused something an agent (or a client posing as one)
// sent: the closed set of reasons behind ringmaster_agent_refusals_total.
// Every refusal is logged with the agent id and counted under one of these.
#include <array>
#include <string_view>

namespace ring {

enum class AgentRefusal {
  kBadRequest,         // malformed enrolment request or upgrade headers
  kWrongClusterToken,  // enrolment without the current cluster token
  kAlreadyEnrolled,    // enrolment of an id that holds a valid credential
  kNoCredential,       // upgrade without an agent id and credential
  kUnknownAgent,       // upgrade for an id that never enrolled
  kWrongCredential,    // upgrade with another credential than the id's
  kRevoked,            // upgrade of a removed agent
  kHelloIdMismatch,    // hello naming another id than the upgrade
  kPoolMismatch,       // hello naming another pool than the enrolment
  kSlotsOverEnrolled,  // hello offering more slots than enrolled (cut down)
  kForeignRunning,     // hello listing a rank the master did not place there
  kForeignState,       // state change for a rank placed elsewhere
  kForeignLogs,        // log batch for a rank placed elsewhere
};

inline constexpr std::array<AgentRefusal, 13> kAllAgentRefusals = {
    AgentRefusal::kBadRequest,        AgentRefusal::kWrongClusterToken, AgentRefusal::kAlreadyEnrolled,
    AgentRefusal::kNoCredential,      AgentRefusal::kUnknownAgent,      AgentRefusal::kWrongCredential,
    AgentRefusal::kRevoked,           AgentRefusal::kHelloIdMismatch,   AgentRefusal::kPoolMismatch,
    AgentRefusal::kSlotsOverEnrolled, AgentRefusal::kForeignRunning,    AgentRefusal::kForeignState,
    AgentRefusal::kForeignLogs,
};

// The metric label, e.g. "wrong_credential".
constexpr std::string_view ToString(AgentRefusal r) {
  switch (r) {
    case AgentRefusal::kBadRequest:
      return "bad_request";
    case AgentRefusal::kWrongClusterToken:
      return "wrong_cluster_token";
    case AgentRefusal::kAlreadyEnrolled:
      return "already_enrolled";
    case AgentRefusal::kNoCredential:
      return "no_credential";
    case AgentRefusal::kUnknownAgent:
      return "unknown_agent";
    case AgentRefusal::kWrongCredential:
      return "wrong_credential";
    case AgentRefusal::kRevoked:
      return "revoked";
    case AgentRefusal::kHelloIdMismatch:
      return "hello_id_mismatch";
    case AgentRefusal::kPoolMismatch:
      return "pool_mismatch";
    case AgentRefusal::kSlotsOverEnrolled:
      return "slots_over_enrolled";
    case AgentRefusal::kForeignRunning:
      return "foreign_running";
    case AgentRefusal::kForeignState:
      return "foreign_state";
    case AgentRefusal::kForeignLogs:
      return "foreign_logs";
  }
  return "bad_request";
}

}  // namespace ring
