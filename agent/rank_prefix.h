#pragma once
// Which rank a line of a per-node process is filed under. One process
// stands for all the slots of its node and starts their workers itself;
// Determined's `python3 -m determined.launch.wrap_rank N CMD` puts
// "[rank=N] " before each line a worker prints. A line that starts with the
// prefix of one of the node's global ranks is that rank's, without the
// prefix; any other line (another number, a rank of another node, a
// malformed prefix) stays the process's own, unchanged, so a worker cannot
// file lines under a rank its node does not run. Pure functions.
#include <optional>
#include <string>

#include "common/agent_protocol.h"

namespace ring {

// The global ranks a node runs: [first, first + count).
struct NodeRanks {
  int first = 0;
  int count = 0;  // 0: none to map (a per-slot process is one rank)
  bool Contains(int rank) const { return rank >= first && rank - first < count; }
};

// A per-node Start's ranks, by node_slot_counts and node_rank (ranks go node
// by node, in node order); none for a per-slot Start or inconsistent counts.
NodeRanks NodeRanksOf(const proto::Start& start);

// The rank a "[rank=N] " prefix of `line` names, when `ranks` holds it;
// then the prefix is removed from `line`. Otherwise nullopt and `line` is
// left as it was.
std::optional<int> TakeRankPrefix(std::string& line, const NodeRanks& ranks);

}  // namespace ring
