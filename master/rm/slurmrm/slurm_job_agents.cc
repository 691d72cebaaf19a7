// SlurmRm, the side of its job agents: the ringagents a job's batch script
// starts on each node, which connect with the allocation's credential
// (Authenticate, OnHello), get their node's starts, report states and logs
// (OnMessage), relay the terminals of shells (SendToJobAgent, OnMessage,
// OnDisconnected) and are listed while they live (AgentsJson, JobAgentOn).
// Submitting, polling and cancelling jobs are in slurm_rm.cc.
#include <spdlog/spdlog.h>

#include "master/auth/tokens.h"
#include "master/rm/rank_starts.h"
#include "master/rm/slurmrm/slurm_rm.h"
#include "master/store/store.h"

namespace ring {

void SlurmRm::Refuse(AgentRefusal why, const std::string& agent_id, const std::string& what) const {
  if (settings_.count_refusal) settings_.count_refusal(why);
  spdlog::warn("[slurmrm] job agent {}: refused ({}): {}", agent_id.substr(0, 128), ToString(why), what);
}

Result<std::string> SlurmRm::Authenticate(std::string_view authorization, std::string_view agent_id,
                                          const std::string& peer) {
  constexpr std::string_view kBearer = "Bearer ";
  auto id = ParseJobAgentId(agent_id);
  if (!id || authorization.substr(0, kBearer.size()) != kBearer) {
    Refuse(AgentRefusal::kNoCredential, std::string(agent_id),
           "from " + peer + ": no job agent id or credential");
    return Status(ErrorCode::kUnauthenticated, "a job agent presents slurm.<job>.<node> and its credential");
  }
  std::optional<AgentRefusal> why;
  {
    std::lock_guard lock(mu_);
    const Allocation* alloc = FindByJob(id->job_id);
    why = JudgeJobAgentClaim(*id, authorization.substr(kBearer.size()), alloc ? &alloc->grant : nullptr);
  }
  if (!why) return std::string(agent_id);
  Refuse(*why, std::string(agent_id), "connection from " + peer);
  return Status(
      ErrorCode::kUnauthenticated,
      "job agent " + std::string(agent_id) + ": not a node of a live allocation's job with this credential");
}

void SlurmRm::OnHello(const std::string& agent_id, const proto::Hello& hello,
                      std::shared_ptr<AgentChannel> channel, SteadyTime) {
  const auto id = ParseJobAgentId(agent_id);
  std::lock_guard lock(mu_);
  Allocation* alloc = id ? FindByJob(id->job_id) : nullptr;
  if (!alloc) {  // its allocation ended between the upgrade and the hello
    channel->Close("the allocation of this job has ended");
    return;
  }
  auto verdict = JudgeJobAgentHello(hello, agent_id, alloc->grant.allocation_id);
  if (verdict.refused) {
    Refuse(*verdict.refused, agent_id, "hello names agent " + hello.agent_id.substr(0, 128));
    channel->Close("hello names another agent id");
    return;
  }
  if (verdict.trimmed)
    Refuse(AgentRefusal::kForeignRunning, agent_id, "hello lists ranks of another allocation");
  JobAgent& agent = alloc->agents[id->node];
  if (agent.channel && agent.channel != channel) agent.channel->Close("replaced by a newer connection");
  agent.channel = channel;
  agent.address = hello.address;
  agent.version = hello.version;
  agent.connected_at = NowRfc3339();
  agent.container_runtimes = hello.container_runtimes;
  channel->Send(proto::Encode(
      proto::Welcome{settings_.heartbeat_interval.count(), settings_.heartbeat_timeout.count()}));
  spdlog::info("[slurmrm] allocation {}: job agent {} connected from {}", alloc->grant.allocation_id,
               agent_id, hello.address);
  if (alloc->reattach_by && alloc->agents.size() == alloc->nodes.size()) {
    alloc->reattach_by.reset();  // back after a master restart; its ranks run on
    spdlog::info("[slurmrm] allocation {}: reattached to Slurm job {}", alloc->grant.allocation_id,
                 alloc->job_id);
  }
  if (alloc->cancel_now || alloc->cancelled) {
    channel->Send(
        proto::Encode(proto::Kill{alloc->grant.allocation_id, 0, "the allocation is being stopped"}));
    return;
  }
  if (!alloc->started && alloc->agents.size() == alloc->nodes.size()) SendStarts(*alloc);
}

void SlurmRm::SendStarts(Allocation& alloc) {
  std::vector<std::string> addrs;
  for (const auto& n : alloc.nodes) addrs.push_back(alloc.agents[n].address);
  for (size_t i = 0; i < alloc.nodes.size(); ++i) {
    JobAgent& agent = alloc.agents[alloc.nodes[i]];
    if (!agent.channel) continue;
    for (auto& start : StartsForNode(alloc.spec, i, addrs, SlotTypeName(pool_.slot_type)))
      agent.channel->Send(proto::Encode(start));
  }
  alloc.started = true;
  spdlog::info("[slurmrm] allocation {}: ranks started on the {} node(s) of Slurm job {}",
               alloc.grant.allocation_id, alloc.nodes.size(), alloc.job_id);
}

void SlurmRm::OnMessage(const std::string& agent_id, const proto::Message& message, SteadyTime) {
  const auto id = ParseJobAgentId(agent_id);
  const auto* output = std::get_if<proto::TerminalOutput>(&message);
  if (output || std::holds_alternative<proto::TerminalClosed>(message)) {
    // The relay takes only a session it opened on this job agent.
    const bool taken = settings_.terminal_message && settings_.terminal_message(agent_id, message);
    // Output for a session the master no longer has: the agent stops sending it.
    if (!taken && output) (void)SendToJobAgent(agent_id, proto::TerminalClose{output->session});
    return;
  }
  if (const auto* stopping = std::get_if<proto::Stopping>(&message)) {
    bool first = false;
    {
      std::lock_guard lock(mu_);
      Allocation* alloc = id ? FindByJob(id->job_id) : nullptr;
      if (!alloc || stopping->allocation_id != alloc->grant.allocation_id) return;
      first = !alloc->stop_requested;
      alloc->stop_requested = true;
    }
    if (first)
      events_.OnAllocationPreempted(stopping->allocation_id, "Slurm is stopping job " +
                                                                 std::to_string(id->job_id) + " (" +
                                                                 stopping->reason.substr(0, 200) + ")");
    return;
  }
  const auto* change = std::get_if<proto::StateChange>(&message);
  const auto* logs = std::get_if<proto::LogBatch>(&message);
  if (!change && !logs) return;  // heartbeats: the job's state is Slurm's to tell
  const std::string& allocation = change ? change->allocation_id : logs->allocation_id;
  const int rank = change ? change->rank : logs->rank;
  std::string node_id;
  {
    std::lock_guard lock(mu_);
    Allocation* alloc = id ? FindByJob(id->job_id) : nullptr;
    if (!alloc) return;  // late report of an ended allocation
    // The node's ranks: those StartsForNode numbered for it.
    const auto pos = std::find(alloc->nodes.begin(), alloc->nodes.end(), id->node);
    int first = 0;
    for (size_t i = 0; i < static_cast<size_t>(pos - alloc->nodes.begin()); ++i)
      first += ProcessesOn(alloc->spec, i);
    const bool mine =
        allocation == alloc->grant.allocation_id && pos != alloc->nodes.end() && rank >= first &&
        rank < first + ProcessesOn(alloc->spec, static_cast<size_t>(pos - alloc->nodes.begin()));
    if (!mine) {
      Refuse(change ? AgentRefusal::kForeignState : AgentRefusal::kForeignLogs, agent_id,
             "allocation " + allocation.substr(0, 128) + " rank " + std::to_string(rank) +
                 ", which its job's credential does not cover");
      return;
    }
    // An exit 0 is the rank's own (it checkpointed and left when asked).
    if (change && change->state == proto::ProcessState::kExited && change->agent_stopping &&
        change->exit_code != 0) {
      // Slurm stopped the job (scancel, preemption, time limit): not the
      // trial's failure. Held back, so the job's end (Tick) reports the
      // allocation lost, an infrastructure failure.
      spdlog::info("[slurmrm] allocation {} rank {}: stopped with its job agent {} (Slurm ends the job)",
                   allocation, rank, agent_id);
      return;
    }
    if (change && change->state == proto::ProcessState::kExited) alloc->exited.insert(rank);
    node_id = NodeId(id->node);
  }
  if (change)
    events_.OnRankState(node_id, *change);
  else
    events_.OnLogs(node_id, *logs);
}

void SlurmRm::OnDisconnected(const std::string& agent_id, const AgentChannel* channel, SteadyTime) {
  const auto id = ParseJobAgentId(agent_id);
  bool gone = true;  // its allocation ended, or this was its live connection
  {
    std::lock_guard lock(mu_);
    Allocation* alloc = id ? FindByJob(id->job_id) : nullptr;
    if (alloc) {
      auto it = alloc->agents.find(id->node);
      if (it != alloc->agents.end() && it->second.channel.get() == channel)
        it->second.channel.reset();
      else if (it != alloc->agents.end() && it->second.channel)
        gone = false;  // a newer connection of the same job agent lives on
    }
  }
  // Outside mu_: the relay calls its clients.
  if (gone && settings_.terminals_gone) settings_.terminals_gone(agent_id);
}

std::optional<JobAgentView> SlurmRm::JobAgentOn(const std::string& allocation_id,
                                                const std::string& node_id) const {
  if (!OwnsNode(node_id)) return std::nullopt;
  const std::string node = node_id.substr(pool_.pool.size() + 1);
  std::lock_guard lock(mu_);
  auto alloc = allocations_.find(allocation_id);
  if (alloc == allocations_.end() || alloc->second.job_id == 0) return std::nullopt;
  auto agent = alloc->second.agents.find(node);
  if (agent == alloc->second.agents.end()) return std::nullopt;
  return JobAgentView{JobAgentIdFor(alloc->second.job_id, node), agent->second.address,
                      agent->second.channel != nullptr};
}

Status SlurmRm::SendToJobAgent(const std::string& agent_id, const proto::Message& message) {
  const auto id = ParseJobAgentId(agent_id);
  std::shared_ptr<AgentChannel> channel;
  {
    std::lock_guard lock(mu_);
    if (Allocation* alloc = id ? FindByJob(id->job_id) : nullptr) {
      auto agent = alloc->agents.find(id->node);
      if (agent != alloc->agents.end()) channel = agent->second.channel;
    }
  }
  if (!channel) return Unavailable("job agent " + agent_id + " is not connected");
  channel->Send(proto::Encode(message));
  return Status::Ok();
}

nlohmann::json SlurmRm::AgentsJson() const {
  std::lock_guard lock(mu_);
  nlohmann::json list = nlohmann::json::array();
  for (const auto& [id, alloc] : allocations_)
    for (size_t i = 0; i < alloc.nodes.size(); ++i) {
      auto agent = alloc.agents.find(alloc.nodes[i]);
      if (agent == alloc.agents.end() || !agent->second.channel) continue;
      nlohmann::json slots = nlohmann::json::array();
      for (int s : alloc.spec.placements[i].slot_ids)
        slots.push_back(
            {{"id", s}, {"type", SlotTypeName(pool_.slot_type)}, {"uuid", ""}, {"allocation_id", id}});
      nlohmann::json runtimes = nlohmann::json::array();
      for (const auto& r : agent->second.container_runtimes)
        runtimes.push_back({{"name", r.name}, {"version", r.version}, {"rootless", r.rootless}});
      list.push_back({{"id", JobAgentIdFor(alloc.job_id, alloc.nodes[i])},
                      {"pool", pool_.pool},
                      {"state", "connected"},
                      {"address", agent->second.address},
                      {"slots", slots},
                      {"enabled", true},
                      {"draining", false},
                      {"runs_as_owner", false},
                      {"container_runtimes", runtimes},
                      {"last_seen_at", agent->second.connected_at},
                      {"slurm_job_id", alloc.job_id},
                      {"slurm_node", alloc.nodes[i]}});
    }
  return list;
}

}  // namespace ring
