#include "agent/rank_prefix.h"

#include <string_view>

namespace ring {

NodeRanks NodeRanksOf(const proto::Start& start) {
  if (!start.per_node || start.node_rank < 0 ||
      start.node_rank >= static_cast<int>(start.node_slot_counts.size()))
    return {};
  int64_t first = 0;
  for (int node = 0; node < start.node_rank; ++node) {
    if (start.node_slot_counts[node] < 0) return {};
    first += start.node_slot_counts[node];
  }
  const int count = start.node_slot_counts[start.node_rank];
  if (count <= 0 || first + count > start.world_size) return {};
  return {static_cast<int>(first), count};
}

std::optional<int> TakeRankPrefix(std::string& line, const NodeRanks& ranks) {
  constexpr std::string_view kOpen = "[rank=";
  constexpr size_t kMaxDigits = 9;  // fits an int
  if (ranks.count <= 0 || line.compare(0, kOpen.size(), kOpen) != 0) return std::nullopt;
  size_t end = kOpen.size();
  int rank = 0;
  while (end < line.size() && line[end] >= '0' && line[end] <= '9' && end - kOpen.size() < kMaxDigits)
    rank = rank * 10 + (line[end++] - '0');
  const size_t digits = end - kOpen.size();
  if (digits == 0 || line.compare(end, 2, "] ") != 0 || !ranks.Contains(rank)) return std::nullopt;
  line.erase(0, end + 2);
  return rank;
}

}  // namespace ring
