#include "master/rm/agentrm/agent_admission.h"

#include <cctype>

#include <nlohmann/json.hpp>

#include "common/json_fields.h"
#include "master/auth/tokens.h"
#include "master/rm/agent_peers.h"

namespace ring {

Status CheckAgentId(std::string_view id) {
  if (id.empty()) return InvalidArgument("agent_id must not be empty");
  if (id.size() > kMaxAgentIdLength)
    return InvalidArgument("agent_id must be at most " + std::to_string(kMaxAgentIdLength) + " characters");
  for (char c : id)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'))
      return InvalidArgument("agent_id may only contain letters, digits, '-', '_' and '.'");
  if (id == "." || id == "..") return InvalidArgument("agent_id must not be \".\" or \"..\"");
  return Status::Ok();
}

Result<EnrolRequest> ParseEnrolRequest(std::string_view body) {
  auto json = nlohmann::json::parse(body, nullptr, false);
  if (json.is_discarded() || !json.is_object())
    return InvalidArgument("the request body must be a JSON object {\"agent_id\", \"pool\", \"slots\"}");
  if (Status s = CheckKnownFields(json, {"agent_id", "pool", "slots"}, "the request body"); !s.ok()) return s;
  EnrolRequest req;
  if (!json.contains("agent_id") || !json["agent_id"].is_string())
    return InvalidArgument("agent_id must be a string");
  req.agent_id = json["agent_id"].get<std::string>();
  if (Status s = CheckAgentId(req.agent_id); !s.ok()) return s;
  if (req.agent_id.rfind(kJobAgentPrefix, 0) == 0)
    return InvalidArgument("agent_id must not begin with \"slurm.\", which names the agents of Slurm jobs");
  if (json.contains("pool")) {
    if (!json["pool"].is_string()) return InvalidArgument("pool must be a string");
    req.pool = json["pool"].get<std::string>();
    if (req.pool.empty() || req.pool.size() > kMaxAgentIdLength)
      return InvalidArgument("pool must be 1 to " + std::to_string(kMaxAgentIdLength) + " characters");
  }
  const auto& slots = json.contains("slots") ? json["slots"] : nlohmann::json();
  if (!slots.is_number_integer() || slots.get<int64_t>() < 0 || slots.get<int64_t>() > kMaxEnrolledSlots ||
      (slots.is_number_unsigned() && slots.get<uint64_t>() > static_cast<uint64_t>(kMaxEnrolledSlots)))
    return InvalidArgument("slots must be an integer from 0 to " + std::to_string(kMaxEnrolledSlots));
  req.slots = slots.get<int64_t>();
  return req;
}

Result<AgentClaim> ParseAgentClaim(std::string_view authorization, std::string_view agent_id) {
  constexpr std::string_view kBearer = "Bearer ";
  if (agent_id.empty())
    return Status(ErrorCode::kUnauthenticated,
                  "no agent id: agents connect with the X-Ring-Agent-Id header and the credential they "
                  "received at enrolment");
  if (Status s = CheckAgentId(agent_id); !s.ok())
    return Status(ErrorCode::kUnauthenticated, std::string(kAgentIdHeader) + ": " + s.message());
  if (authorization.size() <= kBearer.size() || authorization.substr(0, kBearer.size()) != kBearer)
    return Status(ErrorCode::kUnauthenticated,
                  "no credential: agents connect with \"Authorization: Bearer <credential>\"");
  return AgentClaim{std::string(agent_id), std::string(authorization.substr(kBearer.size()))};
}

std::optional<AgentRefusal> JudgeClaim(const AgentClaim& claim, const Enrolment* enrolled) {
  if (!enrolled) return AgentRefusal::kUnknownAgent;
  // Compared in constant time even for a revoked id, so timing tells nothing.
  const bool matches = TokenMatches(claim.credential, enrolled->credential_hash);
  if (enrolled->revoked) return AgentRefusal::kRevoked;
  if (!matches) return AgentRefusal::kWrongCredential;
  return std::nullopt;
}

std::optional<AgentRefusal> JudgeEnrolment(const Enrolment* enrolled) {
  if (enrolled && !enrolled->revoked) return AgentRefusal::kAlreadyEnrolled;
  return std::nullopt;
}

HelloVerdict JudgeHello(const proto::Hello& hello, const std::string& authenticated_id,
                        const Enrolment& enrolment, const PlacedRanks& placed,
                        const std::function<bool(const std::string& allocation_id)>& live) {
  HelloVerdict v;
  if (hello.agent_id != authenticated_id) {
    v.refused = AgentRefusal::kHelloIdMismatch;
    return v;
  }
  const std::string pool = hello.pool.empty() ? "default" : hello.pool;
  if (pool != enrolment.pool) {
    v.refused = AgentRefusal::kPoolMismatch;
    return v;
  }
  v.admitted = hello;
  v.admitted.pool = pool;
  if (static_cast<int64_t>(v.admitted.slots.size()) > enrolment.slots) {
    v.admitted.slots.resize(static_cast<size_t>(std::max<int64_t>(enrolment.slots, 0)));
    v.trimmed.push_back(AgentRefusal::kSlotsOverEnrolled);
  }
  std::vector<proto::RunningProcess> running;
  bool foreign = false;
  for (const auto& r : hello.running) {
    auto here = placed.find(r.allocation_id);
    if (here != placed.end() && !here->second.count(r.rank)) {
      foreign = true;  // another rank of an allocation that is here: dropped
      continue;
    }
    if (here == placed.end() && live && live(r.allocation_id)) foreign = true;  // kept, to be killed here
    running.push_back(r);
  }
  if (foreign) v.trimmed.push_back(AgentRefusal::kForeignRunning);
  v.admitted.running = std::move(running);
  return v;
}

}  // namespace ring
