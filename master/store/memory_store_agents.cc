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

Status MemoryStore::PutSlurmJob(const SlurmJobRecord& j) {
  std::lock_guard lock(mu_);
  if (j.allocation_id.empty() || j.job_id <= 0)
    return InvalidArgument("put slurm job: allocation_id and a positive job_id are required");
  SlurmJobRecord r = j;
  r.created_at = NowRfc3339();
  slurm_jobs_[j.allocation_id] = r;
  return Status::Ok();
}

Result<SlurmJobRecord> MemoryStore::GetSlurmJob(const std::string& allocation_id) {
  std::lock_guard lock(mu_);
  auto it = slurm_jobs_.find(allocation_id);
  if (it == slurm_jobs_.end()) return NotFound("no Slurm job for allocation " + allocation_id);
  return it->second;
}

Status MemoryStore::DeleteSlurmJob(const std::string& allocation_id) {
  std::lock_guard lock(mu_);
  slurm_jobs_.erase(allocation_id);
  return Status::Ok();
}

}  // namespace ring
