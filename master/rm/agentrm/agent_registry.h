#pragma once
// What the master knows about each agent right now: its slots, which
// allocation holds each slot, its channel and its heartbeat deadline.
// Plain data owned by AgentRm and used under its mutex.
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/agent_protocol.h"
#include "common/states.h"
#include "master/rm/agentrm/agent_channel.h"
#include "master/scheduler/scheduler.h"

namespace ring {

using SteadyTime = std::chrono::steady_clock::time_point;

struct AgentEntry {
  std::string id;
  std::string pool;
  std::string address;
  std::vector<proto::Slot> slots;
  std::map<int, std::string> slot_owner;  // slot id -> allocation id
  // allocation id -> the ranks the master placed here: the only ranks whose
  // states and logs this agent may report.
  std::map<std::string, std::set<int>> ranks;
  std::shared_ptr<AgentChannel> channel;  // null unless connected
  AgentState liveness = AgentState::kConnected;
  // Connected: when silence closes the connection. Disconnected: when the
  // reconnect window ends and the agent is lost.
  SteadyTime deadline;
  // Its last frame; formatted (RFC 3339) only when listed or stored, not on
  // each heartbeat.
  std::chrono::system_clock::time_point last_seen;
  bool enabled = true;    // false: no new placements (kept across reconnects)
  bool draining = false;  // disabled while its running work finishes
  // From its hello: it runs each task as the owner's Unix account (false:
  // single-user mode, tasks run as the agent's own user).
  bool runs_as_owner = false;
  std::vector<proto::ContainerRuntime> container_runtimes;  // from its hello
};

// One pool's agents counted, not listed (GET /api/v1/pools, /metrics): with
// 10,000 agents a count takes a walk of the registry, a list 0.3 s of JSON.
struct PoolAgentCounts {
  std::map<AgentState, int64_t> agents;                   // by state
  int64_t slots = 0, slots_used = 0;                      // every agent's
  int64_t connected_slots = 0, connected_slots_used = 0;  // connected agents' alone
};

class AgentRegistry {
 public:
  // Adds or refreshes an agent after its hello.
  AgentEntry& Connect(const proto::Hello& hello, std::shared_ptr<AgentChannel> channel, SteadyTime deadline);
  AgentEntry* Find(const std::string& id);
  // Sets an agent's deadline (a heartbeat pushes it back); the only writer
  // of AgentEntry::deadline besides this class.
  void SetDeadline(AgentEntry& e, SteadyTime deadline) {
    e.deadline = deadline;
    if (deadline < next_expiry_) next_expiry_ = deadline;
  }
  // Marks an agent's connection closed (only if `channel` is still its current
  // one); it is lost unless it reconnects by `lost_at`.
  void Disconnect(const std::string& id, const AgentChannel* channel, SteadyTime lost_at);
  // Connected agents silent past their deadline are disconnected (their channel
  // closed, lost at now + reconnect_window); disconnected agents past theirs are
  // lost. One pass over the agents (it runs every tick, while heartbeats wait
  // for the same lock), and none before the earliest deadline the last pass
  // saw or a later SetDeadline set: with agents heartbeating every second
  // and a 10 s timeout, one pass in about nine seconds instead of five a
  // second.
  struct Expired {
    std::vector<std::string> lost;  // the agents lost now
    bool silenced = false;          // a connection was closed for silence
  };
  Expired ExpireDeadlines(SteadyTime now, std::chrono::milliseconds reconnect_window);

  void Hold(const std::string& agent_id, const std::vector<int>& slot_ids, const std::string& allocation_id);
  // Records ranks [first_rank, first_rank + count) of an allocation as placed
  // on the agent; with `only_if_unknown`, only when none are recorded yet.
  void PlaceRanks(const std::string& agent_id, const std::string& allocation_id, int first_rank, int count,
                  bool only_if_unknown);
  void Release(const std::string& allocation_id);

  enum class Report { kPlacedHere, kNotLive, kForeign };
  // Whether `agent_id` may report on rank `rank` of `allocation_id`: placed
  // there, or an allocation no agent holds any more (a late report, dropped
  // quietly), or one placed elsewhere (refused).
  Report JudgeReport(const std::string& agent_id, const std::string& allocation_id, int rank) const;
  bool Live(const std::string& allocation_id) const { return placed_on_.count(allocation_id) > 0; }

  // Connected agents with their free slots, for the scheduler; disabled
  // ones are left out of SchedulableViews and marked in AllViews.
  std::vector<AgentView> SchedulableViews() const;
  std::vector<AgentView> AllViews() const;
  // How many agents are connected: AllViews().size(), without building them.
  size_t ConnectedCount() const;
  nlohmann::json ToJson() const { return AgentsJson(Snapshot()); }
  // The agents without their channels: what GET /api/v1/agents shows, copied
  // under the controller's lock and turned into JSON after it is released.
  std::vector<AgentEntry> Snapshot() const;
  static nlohmann::json AgentsJson(const std::vector<AgentEntry>& agents);
  // Each pool's agents by state and their slots, by pool name.
  std::map<std::string, PoolAgentCounts> CountByPool() const;
  const std::map<std::string, AgentEntry>& agents() const { return agents_; }

 private:
  std::map<std::string, AgentEntry> agents_;
  // No deadline passes before this (a lower bound: deadlines only move later
  // except through SetDeadline, which lowers it).
  SteadyTime next_expiry_ = SteadyTime::min();
  std::map<std::string, std::set<std::string>> placed_on_;  // allocation id -> agents holding its ranks
};

}  // namespace ring
