#pragma once
// The resource manager the lifecycle holds when some pools are Slurm
// partitions: each call goes to the manager of the pool, node or allocation
// it concerns — a SlurmRm per Slurm pool, our own agents (AgentRm) for the
// rest. It is also the door for job agents, handing each to the SlurmRm
// that owns its job. Adds no state of its own beyond which manager owns
// what, so it needs no lock: its parts are thread-safe.
#include <memory>
#include <vector>

#include "master/rm/agent_peers.h"
#include "master/rm/agentrm/agent_rm.h"
#include "master/rm/slurmrm/slurm_rm.h"

namespace ring {

class RoutingRm : public ResourceManager, public JobAgentDoor {
 public:
  RoutingRm(std::unique_ptr<AgentRm> agents, std::vector<std::unique_ptr<SlurmRm>> slurm);

  AgentRm& agents() { return *agents_; }
  const std::vector<std::unique_ptr<SlurmRm>>& slurm() const { return slurm_; }
  // Our agents and the live job agents (GET /api/v1/agents).
  nlohmann::json AgentsJson() const;
  // The Slurm job of an allocation on a Slurm pool.
  std::optional<SlurmJobView> SlurmJob(const std::string& allocation_id) const;
  // The job agent that runs `allocation_id`'s ranks on `node` (a placement's
  // node id) when the node is a Slurm pool's and its job agent has said
  // hello; nullopt else (our own agents are their nodes).
  std::optional<JobAgentView> JobAgentOn(const std::string& allocation_id, const std::string& node) const;
  // Whether `node` (a placement's node id) is a Slurm pool's.
  bool IsSlurmNode(const std::string& node) const { return ByNode(node) != nullptr; }
  // Sends a terminal's message to `agent_id`'s live connection: a job
  // agent's ("slurm.<job>.<node>") through its pool's SlurmRm, else one of
  // our agents'. kUnavailable when it has none. Safe on any thread.
  Status SendToAgent(const std::string& agent_id, const proto::Message& message);

  std::vector<AgentView> Offers() const override;
  Status CheckFits(const ResourcesConfig& resources, const std::vector<std::string>& declared) const override;
  Status CheckContainers(const std::string& pool, const std::string& runtime) const override;
  void Launch(const LaunchSpec& spec) override;
  void Adopt(const std::string& allocation_id, const std::vector<Placement>& placements, int processes,
             const std::string& pool, SteadyTime deadline) override;
  void Kill(const std::string& allocation_id, const std::vector<Placement>& placements, EndCause why,
            const std::string& node = "") override;
  void Release(const std::string& allocation_id) override;
  void Tick(SteadyTime now) override;

  Result<std::string> Authenticate(std::string_view authorization, std::string_view agent_id,
                                   const std::string& peer) override;
  void OnHello(const std::string& agent_id, const proto::Hello& hello, std::shared_ptr<AgentChannel> channel,
               SteadyTime now) override;
  void OnMessage(const std::string& agent_id, const proto::Message& message, SteadyTime now) override;
  void OnDisconnected(const std::string& agent_id, const AgentChannel* channel, SteadyTime now) override;

 private:
  SlurmRm* ByPool(const std::string& pool) const;
  SlurmRm* ByNode(const std::string& node) const;
  SlurmRm* ByAllocation(const std::string& allocation_id) const;
  SlurmRm* ByAgentId(std::string_view agent_id) const;

  std::unique_ptr<AgentRm> agents_;
  std::vector<std::unique_ptr<SlurmRm>> slurm_;
};

}  // namespace ring
