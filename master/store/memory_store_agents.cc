// MemoryStore: agent enrolments.
#include "master/store/memory_store.h"

namespace ring {

Status MemoryStore::PutAgentEnrolment(const AgentEnrolmentRecord& e) {
  std::lock_guard lock(mu_);
  if (e.agent_id.empty()) return InvalidArgument("put agent enrolment: agent_id must not be empty");
  if (e.slots < 0) return InvalidArgument("put agent enrolment '" + e.agent_id + "': slots must be >= 0");
  enrolments_[e.agent_id] = e;
  return Status::Ok();
}

Result<std::vector<AgentEnrolmentRecord>> MemoryStore::ListAgentEnrolments() {
  std::lock_guard lock(mu_);
  std::vector<AgentEnrolmentRecord> out;
  for (const auto& [id, e] : enrolments_) out.push_back(e);
  return out;
}

}  // namespace ring
