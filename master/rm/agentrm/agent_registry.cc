#include "master/rm/agentrm/agent_registry.h"

#include <algorithm>

#include "master/store/store.h"

namespace ring {

AgentEntry& AgentRegistry::Connect(const proto::Hello& hello, std::shared_ptr<AgentChannel> channel,
                                   SteadyTime deadline) {
  AgentEntry& e = agents_[hello.agent_id];
  const bool was_lost = e.liveness == AgentState::kLost;
  e.id = hello.agent_id;
  e.pool = hello.pool.empty() ? "default" : hello.pool;
  e.address = hello.address;
  e.slots = hello.slots;
  e.runs_as_owner = hello.runs_as_owner;
  e.container_runtimes = hello.container_runtimes;
  if (was_lost) {
    e.slot_owner.clear();
    for (const auto& [allocation, ranks] : e.ranks) {
      auto on = placed_on_.find(allocation);
      if (on == placed_on_.end()) continue;
      on->second.erase(e.id);
      if (on->second.empty()) placed_on_.erase(on);
    }
    e.ranks.clear();
  }
  // Forget holdings of slots the agent no longer has.
  for (auto it = e.slot_owner.begin(); it != e.slot_owner.end();) {
    bool exists = false;
    for (const auto& s : e.slots) exists |= s.id == it->first;
    it = exists ? std::next(it) : e.slot_owner.erase(it);
  }
  e.channel = std::move(channel);
  e.liveness = AgentState::kConnected;
  SetDeadline(e, deadline);
  e.last_seen = std::chrono::system_clock::now();
  return e;
}

AgentEntry* AgentRegistry::Find(const std::string& id) {
  auto it = agents_.find(id);
  return it == agents_.end() ? nullptr : &it->second;
}

void AgentRegistry::Disconnect(const std::string& id, const AgentChannel* channel, SteadyTime lost_at) {
  auto* e = Find(id);
  if (!e || e->channel.get() != channel) return;
  e->channel.reset();
  if (e->liveness != AgentState::kConnected) return;
  e->liveness = AgentState::kDisconnected;
  SetDeadline(*e, lost_at);
}

AgentRegistry::Expired AgentRegistry::ExpireDeadlines(SteadyTime now,
                                                      std::chrono::milliseconds reconnect_window) {
  Expired expired;
  if (now < next_expiry_) return expired;
  SteadyTime next = SteadyTime::max();
  for (auto& [id, e] : agents_) {
    if (e.liveness == AgentState::kLost) continue;
    if (now < e.deadline) {
      next = std::min(next, e.deadline);
      continue;
    }
    if (e.liveness == AgentState::kConnected) {
      // Silent past the heartbeat deadline: drop the connection, open the window.
      if (e.channel) e.channel->Close("heartbeat timeout");
      e.channel.reset();
      e.liveness = AgentState::kDisconnected;
      e.deadline = now + reconnect_window;
      next = std::min(next, e.deadline);
      expired.silenced = true;
      continue;
    }
    e.liveness = AgentState::kLost;
    expired.lost.push_back(id);
  }
  next_expiry_ = next;
  return expired;
}

void AgentRegistry::Hold(const std::string& agent_id, const std::vector<int>& slot_ids,
                         const std::string& allocation_id) {
  auto* e = Find(agent_id);
  if (!e) return;
  for (int s : slot_ids) e->slot_owner[s] = allocation_id;
}

void AgentRegistry::PlaceRanks(const std::string& agent_id, const std::string& allocation_id, int first_rank,
                               int count, bool only_if_unknown) {
  auto* e = Find(agent_id);
  if (!e) return;
  auto& ranks = e->ranks[allocation_id];
  if (only_if_unknown && !ranks.empty()) return;
  for (int r = first_rank; r < first_rank + count; ++r) ranks.insert(r);
  placed_on_[allocation_id].insert(agent_id);
}

void AgentRegistry::Release(const std::string& allocation_id) {
  for (auto& [id, e] : agents_) {
    for (auto it = e.slot_owner.begin(); it != e.slot_owner.end();)
      it = it->second == allocation_id ? e.slot_owner.erase(it) : std::next(it);
    e.ranks.erase(allocation_id);
  }
  placed_on_.erase(allocation_id);
}

AgentRegistry::Report AgentRegistry::JudgeReport(const std::string& agent_id,
                                                 const std::string& allocation_id, int rank) const {
  auto agent = agents_.find(agent_id);
  if (agent != agents_.end()) {
    auto here = agent->second.ranks.find(allocation_id);
    if (here != agent->second.ranks.end() && here->second.count(rank)) return Report::kPlacedHere;
  }
  return Live(allocation_id) ? Report::kForeign : Report::kNotLive;
}

std::vector<AgentView> AgentRegistry::AllViews() const {
  std::vector<AgentView> views;
  for (const auto& [id, e] : agents_) {
    if (e.liveness != AgentState::kConnected) continue;
    AgentView v{id,
                e.pool,
                e.slots.empty() ? "cpu" : e.slots.front().type,
                {},
                static_cast<int>(e.slots.size()),
                e.enabled};
    for (const auto& s : e.slots)
      if (!e.slot_owner.count(s.id)) v.free_slots.push_back(s.id);
    for (const auto& r : e.container_runtimes) v.container_runtimes.push_back(r.name);
    views.push_back(std::move(v));
  }
  return views;
}

size_t AgentRegistry::ConnectedCount() const {
  size_t n = 0;
  for (const auto& [id, e] : agents_) n += e.liveness == AgentState::kConnected;
  return n;
}

std::vector<AgentView> AgentRegistry::SchedulableViews() const {
  std::vector<AgentView> views = AllViews();
  std::erase_if(views, [](const AgentView& v) { return !v.enabled; });
  return views;
}

std::map<std::string, PoolAgentCounts> AgentRegistry::CountByPool() const {
  std::map<std::string, PoolAgentCounts> out;
  for (const auto& [id, e] : agents_) {
    PoolAgentCounts& c = out[e.pool];
    ++c.agents[e.liveness];
    const auto slots = static_cast<int64_t>(e.slots.size());
    int64_t used = 0;
    for (const auto& s : e.slots) used += e.slot_owner.count(s.id) > 0 ? 1 : 0;
    c.slots += slots;
    c.slots_used += used;
    if (e.liveness != AgentState::kConnected) continue;
    c.connected_slots += slots;
    c.connected_slots_used += used;
  }
  return out;
}

std::vector<AgentEntry> AgentRegistry::Snapshot() const {
  std::vector<AgentEntry> out;
  out.reserve(agents_.size());
  for (const auto& [id, e] : agents_) {
    out.push_back(e);
    out.back().channel = nullptr;  // sessions are released only under the lock
  }
  return out;
}

namespace {

nlohmann::json RuntimesJson(const std::vector<proto::ContainerRuntime>& runtimes) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : runtimes)
    out.push_back({{"name", r.name}, {"version", r.version}, {"rootless", r.rootless}});
  return out;
}

}  // namespace

nlohmann::json AgentRegistry::AgentsJson(const std::vector<AgentEntry>& agents) {
  nlohmann::json list = nlohmann::json::array();
  for (const AgentEntry& e : agents) {
    nlohmann::json slots = nlohmann::json::array();
    for (const auto& s : e.slots) {
      auto owner = e.slot_owner.find(s.id);
      slots.push_back({{"id", s.id},
                       {"type", s.type},
                       {"uuid", s.uuid},
                       {"allocation_id",
                        owner == e.slot_owner.end() ? nlohmann::json() : nlohmann::json(owner->second)}});
    }
    list.push_back({{"id", e.id},
                    {"pool", e.pool},
                    {"state", ToString(e.liveness)},
                    {"address", e.address},
                    {"slots", slots},
                    {"enabled", e.enabled},
                    {"draining", e.draining},
                    {"runs_as_owner", e.runs_as_owner},
                    {"container_runtimes", RuntimesJson(e.container_runtimes)},
                    {"last_seen_at", FormatRfc3339(e.last_seen)}});
  }
  return list;
}

}  // namespace ring
