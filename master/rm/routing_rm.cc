#include "master/rm/routing_rm.h"

namespace ring {

RoutingRm::RoutingRm(std::unique_ptr<AgentRm> agents, std::vector<std::unique_ptr<SlurmRm>> slurm)
    : agents_(std::move(agents)), slurm_(std::move(slurm)) {}

SlurmRm* RoutingRm::ByPool(const std::string& pool) const {
  for (const auto& s : slurm_)
    if (s->pool() == pool) return s.get();
  return nullptr;
}

SlurmRm* RoutingRm::ByNode(const std::string& node) const {
  for (const auto& s : slurm_)
    if (s->OwnsNode(node)) return s.get();
  return nullptr;
}

SlurmRm* RoutingRm::ByAllocation(const std::string& allocation_id) const {
  for (const auto& s : slurm_)
    if (s->OwnsAllocation(allocation_id)) return s.get();
  return nullptr;
}

SlurmRm* RoutingRm::ByAgentId(std::string_view agent_id) const {
  auto id = ParseJobAgentId(agent_id);
  if (!id) return nullptr;
  for (const auto& s : slurm_)
    if (s->OwnsJob(id->job_id)) return s.get();
  return nullptr;
}

nlohmann::json RoutingRm::AgentsJson() const {
  auto list = agents_->AgentsJson();
  for (const auto& s : slurm_)
    for (auto& a : s->AgentsJson()) list.push_back(std::move(a));
  return list;
}

std::optional<SlurmJobView> RoutingRm::SlurmJob(const std::string& allocation_id) const {
  for (const auto& s : slurm_)
    if (auto job = s->Job(allocation_id)) return job;
  return std::nullopt;
}

std::optional<JobAgentView> RoutingRm::JobAgentOn(const std::string& allocation_id,
                                                  const std::string& node) const {
  if (SlurmRm* s = ByNode(node)) return s->JobAgentOn(allocation_id, node);
  return std::nullopt;
}

Status RoutingRm::SendToAgent(const std::string& agent_id, const proto::Message& message) {
  if (SlurmRm* s = ByAgentId(agent_id)) return s->SendToJobAgent(agent_id, message);
  if (agent_id.rfind(kJobAgentPrefix, 0) == 0)
    return Unavailable("job agent " + agent_id + " is not connected");  // its job is no pool's now
  return agents_->SendToAgent(agent_id, message);
}

std::vector<AgentView> RoutingRm::Offers() const {
  auto offers = agents_->Offers();
  for (const auto& s : slurm_)
    for (auto& v : s->Offers()) offers.push_back(std::move(v));
  return offers;
}

Status RoutingRm::CheckFits(const ResourcesConfig& resources,
                            const std::vector<std::string>& declared) const {
  if (SlurmRm* s = ByPool(resources.resource_pool)) return s->CheckFits(resources, declared);
  return agents_->CheckFits(resources, declared);
}

Status RoutingRm::CheckContainers(const std::string& pool, const std::string& runtime) const {
  if (SlurmRm* s = ByPool(pool)) return s->CheckContainers(pool, runtime);
  return agents_->CheckContainers(pool, runtime);
}

void RoutingRm::Launch(const LaunchSpec& spec) {
  if (!spec.placements.empty())
    if (SlurmRm* s = ByNode(spec.placements.front().agent_id)) return s->Launch(spec);
  agents_->Launch(spec);
}

void RoutingRm::Adopt(const std::string& allocation_id, const std::vector<Placement>& placements,
                      int processes, const std::string& pool, SteadyTime deadline) {
  if (SlurmRm* s = ByPool(pool)) return s->Adopt(allocation_id, placements, processes, pool, deadline);
  agents_->Adopt(allocation_id, placements, processes, pool, deadline);
}

void RoutingRm::Kill(const std::string& allocation_id, const std::vector<Placement>& placements, EndCause why,
                     const std::string& node) {
  SlurmRm* s = node.empty() ? ByAllocation(allocation_id) : ByNode(node);
  if (s) return s->Kill(allocation_id, placements, why, node);
  agents_->Kill(allocation_id, placements, why, node);
}

void RoutingRm::Release(const std::string& allocation_id) {
  // Every manager: an allocation adopted after a restart holds slots without
  // being known otherwise.
  agents_->Release(allocation_id);
  for (const auto& s : slurm_) s->Release(allocation_id);
}

void RoutingRm::Tick(SteadyTime now) {
  agents_->Tick(now);
  for (const auto& s : slurm_) s->Tick(now);
}

Result<std::string> RoutingRm::Authenticate(std::string_view authorization, std::string_view agent_id,
                                            const std::string& peer) {
  if (SlurmRm* s = ByAgentId(agent_id)) return s->Authenticate(authorization, agent_id, peer);
  if (!slurm_.empty())
    return slurm_.front()->Authenticate(authorization, agent_id, peer);  // refuses, counted
  return Status(ErrorCode::kUnauthenticated, "this master has no Slurm pool");
}

void RoutingRm::OnHello(const std::string& agent_id, const proto::Hello& hello,
                        std::shared_ptr<AgentChannel> channel, SteadyTime now) {
  if (SlurmRm* s = ByAgentId(agent_id)) return s->OnHello(agent_id, hello, std::move(channel), now);
  channel->Close("the allocation of this job has ended");
}

void RoutingRm::OnMessage(const std::string& agent_id, const proto::Message& message, SteadyTime now) {
  if (SlurmRm* s = ByAgentId(agent_id)) s->OnMessage(agent_id, message, now);
}

void RoutingRm::OnDisconnected(const std::string& agent_id, const AgentChannel* channel, SteadyTime now) {
  if (SlurmRm* s = ByAgentId(agent_id)) s->OnDisconnected(agent_id, channel, now);
}

}  // namespace ring
