#include "distributed/hierarchical/hierarchical_topology.h"

#include <map>

#include "ring/trial/errors.h"

namespace ring::trial::detail {
namespace {

std::string RanksOf(const std::vector<int>& ranks) {
  std::vector<int> known;
  for (int r : ranks)
    if (r >= 0) known.push_back(r);
  return DescribeRanks(known);
}

}  // namespace

HostTopology BuildHostTopology(const std::vector<RankRecord>& ranks) {
  HostTopology topology;
  topology.agent_of.assign(ranks.size(), -1);
  topology.local_rank_of.assign(ranks.size(), -1);
  std::map<std::string, int> index_of;
  for (size_t r = 0; r < ranks.size(); ++r) {
    const RankRecord& record = ranks[r];
    if (record.agent_id.empty())
      throw ConfigError("hierarchical process group: rank " + std::to_string(r) +
                        " has no agent id (RING_AGENT_ID), so which ranks share a host is unknown; use gloo");
    if (record.local_world_size < 1 || record.local_rank < 0 || record.local_rank >= record.local_world_size)
      throw ConfigError("hierarchical process group: rank " + std::to_string(r) + " has local rank " +
                        std::to_string(record.local_rank) + " of " + std::to_string(record.local_world_size));
    auto [it, added] = index_of.try_emplace(record.agent_id, static_cast<int>(topology.agents.size()));
    if (added)
      topology.agents.push_back(
          {record.agent_id, std::vector<int>(static_cast<size_t>(record.local_world_size), -1)});
    AgentRanks& agent = topology.agents[static_cast<size_t>(it->second)];
    const auto expected = agent.ranks.size();
    if (static_cast<size_t>(record.local_world_size) != expected)
      throw ConfigError("hierarchical process group: ranks on agent " + agent.agent_id +
                        " disagree on LOCAL_WORLD_SIZE: rank " + std::to_string(r) + " has " +
                        std::to_string(record.local_world_size) + ", " + RanksOf(agent.ranks) + " " +
                        std::to_string(expected));
    int& slot = agent.ranks[static_cast<size_t>(record.local_rank)];
    if (slot >= 0)
      throw ConfigError("hierarchical process group: ranks " + std::to_string(slot) + " and " +
                        std::to_string(r) + " both have local rank " + std::to_string(record.local_rank) +
                        " on agent " + agent.agent_id);
    slot = static_cast<int>(r);
    topology.agent_of[r] = it->second;
    topology.local_rank_of[r] = record.local_rank;
  }
  for (const AgentRanks& agent : topology.agents) {
    std::vector<int> present;
    for (size_t l = 0; l < agent.ranks.size(); ++l)
      if (agent.ranks[l] < 0) {
        for (int r : agent.ranks)
          if (r >= 0) present.push_back(r);
        throw ConfigError("hierarchical process group: agent " + agent.agent_id + " should run " +
                          std::to_string(agent.ranks.size()) + " ranks (LOCAL_WORLD_SIZE) but runs only " +
                          RanksOf(present) + "; no rank has local rank " + std::to_string(l));
      }
  }
  return topology;
}

bool PreferHierarchical(const std::vector<RankRecord>& ranks) {
  std::map<std::string, int> count;
  for (const RankRecord& record : ranks) {
    if (record.agent_id.empty()) return false;
    if (++count[record.agent_id] > 1) return true;
  }
  return false;
}

}  // namespace ring::trial::detail
