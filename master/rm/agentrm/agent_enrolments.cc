#include "master/rm/agentrm/agent_enrolments.h"

#include <spdlog/spdlog.h>

#include "master/auth/cluster_token.h"
#include "master/auth/tokens.h"
#include "master/store/store.h"

namespace ring {
namespace {

bool TokensEqual(std::string_view a, std::string_view b) {
  return TokenMatches(a, HashToken(b));  // constant time in the secret's content
}

}  // namespace

AgentEnrolments::AgentEnrolments(Store& store, std::string cluster_token_file, std::string cluster_token,
                                 AgentRefusalCounter count)
    : store_(store),
      cluster_token_file_(std::move(cluster_token_file)),
      count_(std::move(count)),
      cluster_token_(std::move(cluster_token)) {}

Status AgentEnrolments::Load() {
  auto rows = store_.ListAgentEnrolments();
  if (!rows.ok()) return rows.status();
  std::lock_guard lock(mu_);
  enrolments_.clear();
  for (const auto& r : *rows)
    enrolments_[r.agent_id] = {r.credential_hash, r.pool, r.slots, r.enrolled_at, !r.revoked_at.empty()};
  return Status::Ok();
}

void AgentEnrolments::Count(AgentRefusal why) const {
  if (count_) count_(why);
}

Status AgentEnrolments::Put(const std::string& agent_id, const Enrolment& e) {
  AgentEnrolmentRecord rec{agent_id, e.credential_hash, e.pool,
                           e.slots,  e.enrolled_at,     e.revoked ? NowRfc3339() : ""};
  if (Status s = store_.PutAgentEnrolment(rec); !s.ok()) return s;
  enrolments_[agent_id] = e;
  return Status::Ok();
}

Result<AgentEnrolments::Issued> AgentEnrolments::Enrol(std::string_view authorization, std::string_view body,
                                                       const std::string& peer) {
  constexpr std::string_view kBearer = "Bearer ";
  const bool presented =
      authorization.size() > kBearer.size() && authorization.substr(0, kBearer.size()) == kBearer;
  {
    std::lock_guard lock(mu_);
    if (!presented || !TokensEqual(authorization.substr(kBearer.size()), cluster_token_)) {
      Count(AgentRefusal::kWrongClusterToken);
      spdlog::warn("[agentrm] enrolment from {} refused: {} cluster token", peer, presented ? "wrong" : "no");
      return Status(ErrorCode::kUnauthenticated,
                    std::string(presented ? "wrong" : "no") +
                        " cluster token: agents enrol with the token of the master's cluster token file "
                        "(ringagent --token-file FILE)");
    }
  }
  auto req = ParseEnrolRequest(body);
  if (!req.ok()) {
    Count(AgentRefusal::kBadRequest);
    spdlog::warn("[agentrm] enrolment from {} refused: {}", peer, req.status().message());
    return req.status();
  }
  std::lock_guard lock(mu_);
  auto it = enrolments_.find(req->agent_id);
  if (auto why = JudgeEnrolment(it == enrolments_.end() ? nullptr : &it->second)) {
    Count(*why);
    spdlog::warn("[agentrm] agent {}: enrolment from {} refused: the id is enrolled already", req->agent_id,
                 peer);
    return Conflict("agent " + req->agent_id + " is enrolled already (since " + it->second.enrolled_at +
                    "); it connects with its own credential. If that agent's state folder was lost, an "
                    "admin removes it first: ring agent remove " +
                    req->agent_id);
  }
  Issued issued{req->agent_id, NewToken(), req->pool, req->slots, NowRfc3339()};
  Enrolment e{HashToken(issued.credential), issued.pool, issued.slots, issued.enrolled_at, false};
  if (Status s = Put(issued.agent_id, e); !s.ok()) return s;
  spdlog::info("[agentrm] agent {} enrolled from {}: pool {}, {} slots", issued.agent_id, peer, issued.pool,
               issued.slots);
  return issued;
}

Result<std::string> AgentEnrolments::Authenticate(std::string_view authorization, std::string_view agent_id,
                                                  const std::string& peer) {
  auto claim = ParseAgentClaim(authorization, agent_id);
  if (!claim.ok()) {
    Count(AgentRefusal::kNoCredential);
    spdlog::warn("[agentrm] agent connection from {} refused: {}", peer, claim.status().message());
    return claim.status();
  }
  std::optional<AgentRefusal> why;
  {
    std::lock_guard lock(mu_);
    auto it = enrolments_.find(claim->agent_id);
    why = JudgeClaim(*claim, it == enrolments_.end() ? nullptr : &it->second);
  }
  if (!why) return claim->agent_id;
  Count(*why);
  spdlog::warn("[agentrm] agent {}: connection from {} refused: {}", claim->agent_id, peer, ToString(*why));
  switch (*why) {
    case AgentRefusal::kUnknownAgent:
      return Status(
          ErrorCode::kUnauthenticated,
          "agent " + claim->agent_id +
              " is not enrolled: it enrols first with the cluster token (POST /api/v1/agents/enrol)");
    case AgentRefusal::kRevoked:
      return Status(
          ErrorCode::kUnauthenticated,
          "agent " + claim->agent_id + " was removed by an admin; it may enrol again with the cluster token");
    default:
      return Status(ErrorCode::kUnauthenticated, "wrong credential for agent " + claim->agent_id);
  }
}

std::optional<Enrolment> AgentEnrolments::Find(const std::string& agent_id) const {
  std::lock_guard lock(mu_);
  auto it = enrolments_.find(agent_id);
  if (it == enrolments_.end()) return std::nullopt;
  return it->second;
}

std::map<std::string, Enrolment> AgentEnrolments::Snapshot() const {
  std::lock_guard lock(mu_);
  return enrolments_;
}

Status AgentEnrolments::Revoke(const std::string& agent_id) {
  std::lock_guard lock(mu_);
  auto it = enrolments_.find(agent_id);
  if (it == enrolments_.end()) return NotFound("agent " + agent_id + " is not enrolled");
  Enrolment e = it->second;
  e.revoked = true;
  if (Status s = Put(agent_id, e); !s.ok()) return s;
  spdlog::info("[agentrm] agent {} removed: its credential no longer connects", agent_id);
  return Status::Ok();
}

Status AgentEnrolments::AllowSlots(const std::string& agent_id, int64_t slots) {
  if (slots < 0 || slots > kMaxEnrolledSlots)
    return InvalidArgument("slots must be an integer from 0 to " + std::to_string(kMaxEnrolledSlots));
  std::lock_guard lock(mu_);
  auto it = enrolments_.find(agent_id);
  if (it == enrolments_.end() || it->second.revoked)
    return NotFound("agent " + agent_id + " is not enrolled");
  Enrolment e = it->second;
  e.slots = slots;
  if (Status s = Put(agent_id, e); !s.ok()) return s;
  spdlog::info("[agentrm] agent {} may offer up to {} slots from its next connection", agent_id, slots);
  return Status::Ok();
}

Result<std::string> AgentEnrolments::RotateClusterToken() {
  std::lock_guard lock(mu_);
  auto token = ring::RotateClusterToken(cluster_token_file_);
  if (!token.ok()) return token.status();
  cluster_token_ = *token;
  spdlog::info("[agentrm] new cluster token written to {}; the old one enrols nothing now",
               cluster_token_file_);
  return token;
}

}  // namespace ring
