// Lines of a per-node process filed under the worker ranks that
// `determined.launch.wrap_rank` prefixed them with: only ranks of the node
// count, and anything else stays the process's line, unchanged.
#include <gtest/gtest.h>

#include "agent/rank_prefix.h"

namespace ring {
namespace {

proto::Start PerNode(int node_rank, std::vector<int> counts) {
  proto::Start start;
  start.per_node = true;
  start.node_rank = node_rank;
  start.node_slot_counts = std::move(counts);
  for (int c : start.node_slot_counts) start.world_size += c;
  return start;
}

TEST(AgentRankPrefixTest, NodeRanksGoNodeByNode) {
  const NodeRanks second = NodeRanksOf(PerNode(1, {4, 2, 3}));
  EXPECT_EQ(second.first, 4);
  EXPECT_EQ(second.count, 2);
  const NodeRanks third = NodeRanksOf(PerNode(2, {4, 2, 3}));
  EXPECT_EQ(third.first, 6);
  EXPECT_EQ(third.count, 3);
  EXPECT_EQ(NodeRanksOf(PerNode(0, {4})).count, 4);

  proto::Start per_slot = PerNode(1, {4, 4});
  per_slot.per_node = false;
  EXPECT_EQ(NodeRanksOf(per_slot).count, 0) << "a per-slot process is one rank";
  EXPECT_EQ(NodeRanksOf(PerNode(2, {4, 4})).count, 0) << "node_rank beyond the counts";
  EXPECT_EQ(NodeRanksOf(PerNode(1, {})).count, 0) << "no counts";
  proto::Start short_world = PerNode(1, {4, 4});
  short_world.world_size = 6;
  EXPECT_EQ(NodeRanksOf(short_world).count, 0) << "counts beyond the world size";
}

TEST(AgentRankPrefixTest, AWorkerLineOfTheNodeIsFiledUnderItsRank) {
  const NodeRanks ranks = NodeRanksOf(PerNode(1, {4, 4}));  // ranks 4..7
  std::string line = "[rank=5] loss 0.25";
  EXPECT_EQ(TakeRankPrefix(line, ranks), 5);
  EXPECT_EQ(line, "loss 0.25");
  line = "[rank=4] ";
  EXPECT_EQ(TakeRankPrefix(line, ranks), 4);
  EXPECT_EQ(line, "");
  line = "[rank=7] [rank=6] nested";
  EXPECT_EQ(TakeRankPrefix(line, ranks), 7);
  EXPECT_EQ(line, "[rank=6] nested") << "only the first prefix is taken";
}

TEST(AgentRankPrefixTest, AnyOtherLineStaysTheProcessesUnchanged) {
  const NodeRanks ranks = NodeRanksOf(PerNode(1, {4, 4}));  // ranks 4..7
  for (const std::string original :
       {"[rank=999] forged", "[rank=3] another node's rank", "[rank=8] beyond the world",
        "[rank=-1] negative", "[rank=] empty", "[rank=5]no space", "[rank=5 unclosed",
        " [rank=5] leading space", "[RANK=5] case", "[rank=99999999999999999999] huge", "plain line", "",
        "[rank=5"}) {
    std::string line = original;
    EXPECT_EQ(TakeRankPrefix(line, ranks), std::nullopt) << original;
    EXPECT_EQ(line, original);
  }
}

TEST(AgentRankPrefixTest, PerSlotLinesAreNeverMapped) {
  std::string line = "[rank=0] hello";
  EXPECT_EQ(TakeRankPrefix(line, NodeRanks{}), std::nullopt);
  EXPECT_EQ(line, "[rank=0] hello");
}

}  // namespace
}  // namespace ring
