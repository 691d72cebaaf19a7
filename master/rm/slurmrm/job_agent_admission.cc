#include "master/rm/slurmrm/job_agent_admission.h"

#include <algorithm>

#include "master/auth/tokens.h"

namespace ring {

std::optional<JobAgentId> ParseJobAgentId(std::string_view id) {
  if (id.substr(0, kJobAgentPrefix.size()) != kJobAgentPrefix) return std::nullopt;
  id.remove_prefix(kJobAgentPrefix.size());
  const size_t dot = id.find('.');
  if (dot == 0 || dot == std::string_view::npos || dot > 18) return std::nullopt;
  JobAgentId parsed;
  for (char c : id.substr(0, dot)) {
    if (c < '0' || c > '9') return std::nullopt;
    parsed.job_id = parsed.job_id * 10 + (c - '0');
  }
  parsed.node = std::string(id.substr(dot + 1));
  if (parsed.job_id <= 0 || parsed.node.empty() || parsed.node.size() > 100) return std::nullopt;
  return parsed;
}

std::string JobAgentIdFor(int64_t job_id, const std::string& node) {
  return std::string(kJobAgentPrefix) + std::to_string(job_id) + "." + node;
}

std::optional<AgentRefusal> JudgeJobAgentClaim(const JobAgentId& id, std::string_view credential,
                                               const JobGrant* grant) {
  if (!grant) return AgentRefusal::kUnknownAgent;
  // Compared in constant time before anything else is looked at.
  const bool matches = TokenMatches(credential, grant->credential_hash);
  if (!matches) return AgentRefusal::kWrongCredential;
  if (std::find(grant->nodes.begin(), grant->nodes.end(), id.node) == grant->nodes.end())
    return AgentRefusal::kUnknownAgent;  // a node outside the job
  return std::nullopt;
}

JobHelloVerdict JudgeJobAgentHello(const proto::Hello& hello, const std::string& authenticated_id,
                                   const std::string& allocation_id) {
  JobHelloVerdict verdict;
  if (hello.agent_id != authenticated_id) {
    verdict.refused = AgentRefusal::kHelloIdMismatch;
    return verdict;
  }
  for (const auto& r : hello.running) {
    if (r.allocation_id == allocation_id)
      verdict.running.push_back(r);
    else
      verdict.trimmed = true;
  }
  return verdict;
}

}  // namespace ring
