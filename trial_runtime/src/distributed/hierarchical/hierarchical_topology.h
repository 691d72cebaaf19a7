#pragma once
// HostTopology: which ranks of a group share an agent (host), computed from
// the rendezvous records alone, so every rank derives the same one. Agents
// are numbered by their lowest global rank; within an agent, ranks are
// indexed by their local rank (the one with local rank 0 leads). Pure.
#include <string>
#include <vector>

#include "distributed/rendezvous.h"

namespace ring::trial::detail {

struct AgentRanks {
  std::string agent_id;
  std::vector<int> ranks;  // global ranks, indexed by local rank
};

struct HostTopology {
  std::vector<AgentRanks> agents;  // by agent index
  std::vector<int> agent_of;       // global rank -> agent index
  std::vector<int> local_rank_of;  // global rank -> local rank

  int leader_of(int agent) const { return agents[static_cast<size_t>(agent)].ranks[0]; }
  bool has_shared_hosts() const { return agents.size() < agent_of.size(); }
};

// Throws ConfigError when a record has no agent id, or when the ranks of one
// agent disagree on LOCAL_WORLD_SIZE, do not number 0..L-1, or are not L.
HostTopology BuildHostTopology(const std::vector<RankRecord>& ranks);

// Whether "auto" should choose the hierarchical backend: some agent (by a
// non-empty agent id) runs more than one rank of the group.
bool PreferHierarchical(const std::vector<RankRecord>& ranks);

}  // namespace ring::trial::detail
