#include "master/rm/agentrm/agent_rm.h"

#include <algorithm>
#include <map>
#include <set>

#include <spdlog/spdlog.h>

#include "master/rm/rank_starts.h"
#include "master/store/store.h"

namespace ring {

AgentRm::AgentRm(Store& store, AgentRmOptions options, RmEvents& events)
    : store_(store), options_(options), events_(events) {}

void AgentRm::Refuse(AgentRefusal why, const std::string& agent_id, const std::string& what) const {
  if (options_.count_refusal) options_.count_refusal(why);
  spdlog::warn("[agentrm] agent {}: refused ({}): {}", agent_id, ToString(why), what);
}

void AgentRm::OnHello(const std::string& agent_id, const proto::Hello& offered,
                      std::shared_ptr<AgentChannel> channel, SteadyTime now) {
  std::optional<Enrolment> enrolment;
  if (options_.enrolments) {
    enrolment = options_.enrolments->Find(agent_id);
    if (!enrolment || enrolment->revoked) {  // removed between its upgrade and its hello
      Refuse(AgentRefusal::kRevoked, agent_id, "hello after the agent was removed");
      channel->Close("this agent was removed");
      return;
    }
  } else {
    enrolment = Enrolment{"", offered.pool.empty() ? "default" : offered.pool,
                          static_cast<int64_t>(offered.slots.size()), "", false};
  }
  AgentRecord rec;
  proto::Hello hello;
  {
    std::lock_guard lock(mu_);
    PlacedRanks placed;
    if (AgentEntry* known = registry_.Find(agent_id)) placed = known->ranks;
    HelloVerdict verdict = JudgeHello(offered, agent_id, *enrolment, placed,
                                      [this](const std::string& id) { return registry_.Live(id); });
    if (verdict.refused) {
      const std::string what = *verdict.refused == AgentRefusal::kPoolMismatch
                                   ? "hello names pool " + offered.pool + " but the agent enrolled in pool " +
                                         enrolment->pool + "; an admin removes it (ring agent remove " +
                                         agent_id + ") to enrol it again"
                                   : "hello names agent " + offered.agent_id.substr(0, kMaxAgentIdLength);
      Refuse(*verdict.refused, agent_id, what);
      channel->Close(*verdict.refused == AgentRefusal::kPoolMismatch ? "pool differs from the enrolled one"
                                                                     : "hello names another agent id");
      return;
    }
    for (AgentRefusal cut : verdict.trimmed)
      Refuse(cut, agent_id,
             cut == AgentRefusal::kSlotsOverEnrolled
                 ? "hello offers " + std::to_string(offered.slots.size()) + " slots; it enrolled with " +
                       std::to_string(enrolment->slots) + " (an admin raises it: ring agent allow-slots)"
                 : "hello lists running ranks the master did not place on it");
    hello = std::move(verdict.admitted);
    AgentEntry* previous = registry_.Find(hello.agent_id);
    if (previous && previous->channel && previous->channel != channel)
      previous->channel->Close("replaced by a newer connection of the same agent");
    channel->Send(proto::Encode(
        proto::Welcome{options_.heartbeat_interval.count(), options_.heartbeat_timeout.count()}));
    AgentEntry& entry = registry_.Connect(hello, std::move(channel), now + options_.heartbeat_timeout);
    // An operator's disable outlives reconnects and master restarts.
    if (!stored_schedulable_)
      if (auto stored = store_.ListAgents(); stored.ok()) {
        stored_schedulable_.emplace();
        for (const auto& a : *stored) (*stored_schedulable_)[a.id] = {a.enabled, a.draining};
      }
    if (stored_schedulable_)
      if (auto it = stored_schedulable_->find(entry.id); it != stored_schedulable_->end()) {
        entry.enabled = it->second.enabled;
        entry.draining = it->second.draining;
      }
    rec = {entry.id,    entry.pool,   entry.address, AgentState::kConnected,
           entry.slots, NowRfc3339(), NowRfc3339()};
    rec.runs_as_owner = entry.runs_as_owner;
  }
  if (Status s = store_.UpsertAgent(rec); !s.ok())
    spdlog::warn("[agentrm] agent {}: cannot record: {}", rec.id, s.message());
  spdlog::info("[agentrm] agent {} connected: pool {}, {} slots, {} running, {}", rec.id, rec.pool,
               hello.slots.size(), hello.running.size(),
               hello.runs_as_owner ? "runs tasks as their owners" : "single-user mode");
  events_.OnNodeConnected(hello.agent_id, hello.running, now);
  events_.OnCapacityChanged();
}

void AgentRm::OnMessage(const std::string& agent_id, const proto::Message& message, SteadyTime now) {
  {
    std::lock_guard lock(mu_);
    if (AgentEntry* e = registry_.Find(agent_id); e && e->liveness == AgentState::kConnected) {
      registry_.SetDeadline(*e, now + options_.heartbeat_timeout);
      e->last_seen = std::chrono::system_clock::now();
    }
  }
  const auto* output = std::get_if<proto::TerminalOutput>(&message);
  if (output || std::holds_alternative<proto::TerminalClosed>(message)) {
    const bool taken = options_.terminal_message && options_.terminal_message(agent_id, message);
    // Output for a session the master no longer has (its client left while
    // the agent was away): the agent is told to stop sending it.
    if (!taken && output) (void)SendToAgent(agent_id, proto::TerminalClose{output->session});
    return;
  }
  const auto* change = std::get_if<proto::StateChange>(&message);
  const auto* logs = std::get_if<proto::LogBatch>(&message);
  if (!change && !logs) return;
  const std::string& allocation = change ? change->allocation_id : logs->allocation_id;
  const int rank = change ? change->rank : logs->rank;
  AgentRegistry::Report report;
  {
    std::lock_guard lock(mu_);
    report = registry_.JudgeReport(agent_id, allocation, rank);
  }
  if (report == AgentRegistry::Report::kNotLive) return;  // a late report of an ended allocation
  if (report == AgentRegistry::Report::kForeign) {
    Refuse(change ? AgentRefusal::kForeignState : AgentRefusal::kForeignLogs, agent_id,
           std::string(change ? "state" : "logs") + " of allocation " + allocation.substr(0, 128) + " rank " +
               std::to_string(rank) + ", which the master did not place on this agent");
    return;
  }
  if (change)
    events_.OnRankState(agent_id, *change);
  else
    events_.OnLogs(agent_id, *logs);
}

void AgentRm::OnDisconnected(const std::string& agent_id, const AgentChannel* channel, SteadyTime now) {
  {
    std::lock_guard lock(mu_);
    registry_.Disconnect(agent_id, channel, now + options_.reconnect_window);
  }
  spdlog::info("[agentrm] agent {} disconnected; lost unless it returns within {} ms", agent_id,
               options_.reconnect_window.count());
  if (options_.terminals_gone) options_.terminals_gone(agent_id);
  events_.OnCapacityChanged();
}

Status AgentRm::SendToAgent(const std::string& agent_id, const proto::Message& message) {
  std::shared_ptr<AgentChannel> channel;
  {
    std::lock_guard lock(mu_);
    if (AgentEntry* agent = registry_.Find(agent_id); agent && agent->liveness == AgentState::kConnected)
      channel = agent->channel;
  }
  if (!channel) return Unavailable("agent " + agent_id + " is not connected");
  channel->Send(proto::Encode(message));
  return Status::Ok();
}

Status AgentRm::Disable(const std::string& agent_id, bool drain) {
  {
    std::lock_guard lock(mu_);
    if (!registry_.Find(agent_id)) return NotFound("agent " + agent_id + " is not known");
  }
  if (Status s = store_.SetAgentSchedulable(agent_id, false, drain); !s.ok()) return s;
  {
    std::lock_guard lock(mu_);
    if (AgentEntry* agent = registry_.Find(agent_id)) {
      agent->enabled = false;
      agent->draining = drain;
    }
    if (stored_schedulable_) (*stored_schedulable_)[agent_id] = {false, drain};
  }
  spdlog::info("[agentrm] agent {} disabled{}", agent_id, drain ? "; draining its running work" : "");
  if (!drain) events_.OnNodeEvicted(agent_id);
  return Status::Ok();
}

Status AgentRm::Enable(const std::string& agent_id) {
  {
    std::lock_guard lock(mu_);
    if (!registry_.Find(agent_id)) return NotFound("agent " + agent_id + " is not known");
  }
  if (Status s = store_.SetAgentSchedulable(agent_id, true, false); !s.ok()) return s;
  {
    std::lock_guard lock(mu_);
    if (AgentEntry* agent = registry_.Find(agent_id)) {
      agent->enabled = true;
      agent->draining = false;
    }
    if (stored_schedulable_) (*stored_schedulable_)[agent_id] = {true, false};
  }
  spdlog::info("[agentrm] agent {} enabled", agent_id);
  events_.OnCapacityChanged();
  return Status::Ok();
}

Status AgentRm::Remove(const std::string& agent_id) {
  AgentRecord rec;
  {
    std::lock_guard lock(mu_);
    AgentEntry* agent = registry_.Find(agent_id);
    if (!agent) return NotFound("agent " + agent_id + " has never connected");
    if (agent->channel) agent->channel->Close("removed by an admin");
    agent->channel.reset();
    const bool was_lost = agent->liveness == AgentState::kLost;
    agent->liveness = AgentState::kLost;
    rec = {agent->id,
           agent->pool,
           agent->address,
           AgentState::kLost,
           agent->slots,
           "",
           FormatRfc3339(agent->last_seen)};
    if (was_lost) return Status::Ok();
  }
  if (Status s = store_.UpsertAgent(rec); !s.ok())
    spdlog::warn("[agentrm] agent {}: cannot record: {}", rec.id, s.message());
  spdlog::warn("[agentrm] agent {} removed by an admin: its work ends", agent_id);
  events_.OnNodeLost(agent_id);
  events_.OnCapacityChanged();
  return Status::Ok();
}

std::map<std::string, PoolAgentCounts> AgentRm::CountAgents() const {
  std::lock_guard lock(mu_);
  return registry_.CountByPool();
}

nlohmann::json AgentRm::AgentsJson() const {
  std::vector<AgentEntry> agents;
  {
    std::lock_guard lock(mu_);
    agents = registry_.Snapshot();
  }
  auto list = AgentRegistry::AgentsJson(agents);  // after the lock: heartbeats need not wait
  if (!options_.enrolments) return list;
  const auto enrolled = options_.enrolments->Snapshot();
  for (auto& a : list) {
    auto it = enrolled.find(a["id"].get<std::string>());
    a["enrolled_at"] = it == enrolled.end() ? nlohmann::json() : nlohmann::json(it->second.enrolled_at);
    a["enrolled_slots"] = it == enrolled.end() ? nlohmann::json() : nlohmann::json(it->second.slots);
    a["revoked"] = it != enrolled.end() && it->second.revoked;
  }
  return list;
}

std::vector<AgentView> AgentRm::Offers() const {
  std::lock_guard lock(mu_);
  return registry_.AllViews();
}

// A pool must be declared in master.yaml or have agents; a trial must fit the
// pool's agents as they are (one agent, or whole agents of one size; one
// agent only when it is single-node).
Status AgentRm::CheckFits(const ResourcesConfig& resources, const std::vector<std::string>& declared) const {
  const std::string& pool = resources.resource_pool;
  const int64_t want = resources.slots_per_trial;
  std::set<std::string> pools(declared.begin(), declared.end());
  std::map<std::pair<std::string, int>, int> agents_of_size;  // (slot type, size) -> agents in the pool
  bool pool_has_agents = false;
  {
    std::lock_guard lock(mu_);
    for (const auto& [id, a] : registry_.agents()) {
      pools.insert(a.pool);
      if (a.pool != pool || a.liveness == AgentState::kLost || a.slots.empty()) continue;
      pool_has_agents = true;
      ++agents_of_size[{a.slots.front().type, static_cast<int>(a.slots.size())}];
    }
  }
  if (!pools.count(pool)) {
    std::string names;
    for (const auto& n : pools) names += (names.empty() ? "" : ", ") + n;
    return Status(ErrorCode::kInvalidConfig, "resources.resource_pool: there is no pool named \"" + pool +
                                                 "\"; this master has: " + names);
  }
  if (!pool_has_agents) return Status::Ok();  // agents may join later
  int64_t largest = 0;
  for (const auto& [key, count] : agents_of_size) largest = std::max<int64_t>(largest, key.second);
  if (resources.is_single_node.value_or(false)) {
    if (want <= largest) return Status::Ok();
    const std::string at = resources.is_single_node_line > 0
                               ? "experiment.yaml:" + std::to_string(resources.is_single_node_line) + ": "
                               : "";
    return Status(
        ErrorCode::kInvalidConfig,
        at + "resources.is_single_node: a trial of " + std::to_string(want) +
            " slots (resources.slots_per_trial) must fit on one agent, and the largest agent in pool " +
            pool + " has " + std::to_string(largest) +
            " slots: give fewer slots, or remove is_single_node to use whole agents");
  }
  for (const auto& [key, count] : agents_of_size) {
    const int size = key.second;
    if (want <= size || (want % size == 0 && want / size <= count)) return Status::Ok();
  }
  return Status(ErrorCode::kInvalidConfig,
                "resources.slots_per_trial: " + std::to_string(want) + " slots can never be placed in pool " +
                    pool + ": its largest agent has " + std::to_string(largest) +
                    " slots and a larger trial needs whole agents of one size adding up to it");
}

Status AgentRm::CheckContainers(const std::string& pool, const std::string& runtime) const {
  int agents = 0;
  std::set<std::string> found;  // the runtimes of the pool's agents
  {
    std::lock_guard lock(mu_);
    for (const auto& [id, a] : registry_.agents()) {
      if (a.pool != pool || a.liveness == AgentState::kLost) continue;
      ++agents;
      for (const auto& r : a.container_runtimes) {
        if (runtime.empty() || r.name == runtime) return Status::Ok();
        found.insert(r.name);
      }
    }
  }
  if (agents == 0) return Status::Ok();  // agents may join later
  std::string have;
  for (const auto& name : found) have += (have.empty() ? "" : ", ") + name;
  const std::string of = "none of its " + std::to_string(agents) + (agents == 1 ? " agent" : " agents");
  if (runtime.empty())
    return Status(ErrorCode::kInvalidConfig,
                  "pool " + pool + " cannot run containers: " + of +
                      " has a container runtime (ring agent list shows them); remove environment.image or "
                      "choose another pool with resources.resource_pool");
  return Status(ErrorCode::kInvalidConfig, "pool " + pool + " runs containers with " + runtime +
                                               " (its container_runtime in master.yaml) and " + of +
                                               " has it" + (have.empty() ? "" : " (they have " + have + ")"));
}

void AgentRm::Launch(const LaunchSpec& spec) {
  if (spec.placements.empty()) return;
  std::lock_guard lock(mu_);
  for (const auto& p : spec.placements) registry_.Hold(p.agent_id, p.slot_ids, spec.allocation_id);
  // Each agent's address in node order (RING_CONTAINER_ADDRS); the first is MASTER_ADDR.
  std::vector<std::string> node_addrs;
  for (const auto& p : spec.placements) {
    const AgentEntry* agent = registry_.Find(p.agent_id);
    node_addrs.push_back(agent && !agent->address.empty() ? agent->address : "127.0.0.1");
  }
  const bool per_node = spec.launch == LaunchMode::kPerNode;
  int rank = 0;
  for (size_t node = 0; node < spec.placements.size(); ++node) {
    const auto& p = spec.placements[node];
    const int processes = ProcessesOn(spec, node);
    registry_.PlaceRanks(p.agent_id, spec.allocation_id, rank, processes, false);
    rank += processes;  // an agent not connected keeps its ranks' numbers; it reports them lost
    AgentEntry* agent = registry_.Find(p.agent_id);
    if (!agent || !agent->channel) continue;
    const std::string slot_type = agent->slots.empty() ? "cpu" : agent->slots.front().type;
    for (auto& start : StartsForNode(spec, node, node_addrs, slot_type))
      agent->channel->Send(proto::Encode(start));
    spdlog::info("[agentrm] allocation {} started on agent {} slots {}{}", spec.allocation_id, p.agent_id,
                 nlohmann::json(p.slot_ids).dump(), per_node ? " (one process for the node)" : "");
  }
}

void AgentRm::Adopt(const std::string& allocation_id, const std::vector<Placement>& placements, int processes,
                    const std::string& pool, SteadyTime deadline) {
  std::lock_guard lock(mu_);
  int rank = 0;  // placements are in rank order; a reconnect adopts only its own (ranks known already)
  for (const auto& p : placements) {
    if (!registry_.Find(p.agent_id)) {
      // Not back yet after a master restart: it has until the deadline.
      proto::Hello ghost{p.agent_id, pool, "", "", {}, {}};
      auto& e = registry_.Connect(ghost, nullptr, deadline);
      e.liveness = AgentState::kDisconnected;
    }
    registry_.Hold(p.agent_id, p.slot_ids, allocation_id);
    // One process per placement under per-node launch; a task of no slot
    // still runs one process there.
    const int ranks = processes > 0 ? 1 : std::max(1, static_cast<int>(p.slot_ids.size()));
    registry_.PlaceRanks(p.agent_id, allocation_id, rank, ranks, true);
    rank += ranks;
  }
}

void AgentRm::Kill(const std::string& allocation_id, const std::vector<Placement>& placements, EndCause why,
                   const std::string& node) {
  const std::string frame =
      proto::Encode(proto::Kill{allocation_id, options_.kill_grace.count(), std::string(Describe(why))});
  std::lock_guard lock(mu_);
  if (!node.empty()) {
    if (AgentEntry* agent = registry_.Find(node); agent && agent->channel) agent->channel->Send(frame);
    return;
  }
  for (const auto& p : placements)
    if (AgentEntry* agent = registry_.Find(p.agent_id); agent && agent->channel) agent->channel->Send(frame);
}

void AgentRm::Release(const std::string& allocation_id) {
  std::lock_guard lock(mu_);
  registry_.Release(allocation_id);
}

void AgentRm::Tick(SteadyTime now) {
  std::vector<std::string> lost;
  std::vector<AgentRecord> records;
  bool silenced = false;  // a connection closed for silence: its slots are gone
  {
    std::lock_guard lock(mu_);
    // One pass, nothing listed: a tick runs every few hundred milliseconds,
    // with every heartbeat waiting for this lock.
    auto expired = registry_.ExpireDeadlines(now, options_.reconnect_window);
    lost = std::move(expired.lost);
    silenced = expired.silenced;
    for (const auto& id : lost)
      if (AgentEntry* e = registry_.Find(id)) {
        records.push_back(
            {e->id, e->pool, e->address, AgentState::kLost, e->slots, "", FormatRfc3339(e->last_seen)});
        records.back().runs_as_owner = e->runs_as_owner;
      }
  }
  for (const auto& rec : records) {
    spdlog::warn("[agentrm] agent {} lost: not back within the {} ms reconnect window", rec.id,
                 options_.reconnect_window.count());
    if (Status s = store_.UpsertAgent(rec); !s.ok())
      spdlog::warn("[agentrm] agent {}: cannot record: {}", rec.id, s.message());
  }
  for (const auto& id : lost) events_.OnNodeLost(id);
  if (silenced) events_.OnCapacityChanged();
}

}  // namespace ring
