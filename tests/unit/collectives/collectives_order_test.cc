// reduce_scatter on every CPU backend (gloo, single, hierarchical on one and
// on several agents), and the order of reduction distributed.h promises for
// shared memory and hierarchical: the same tensor allreduced whole and in
// odd-sized pieces gives the same bits, on every rank, and reduce_scatter
// gives the bits of the allreduce.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ring/trial/distributed.h"
#include "ring/trial/errors.h"
#include "ring/trial/kv_store.h"
#include "tests/unit/distributed/distributed_thread_ranks.h"

namespace ring::trial {
namespace {

using namespace std::chrono_literals;
using testing::RunThreads;

std::string OrderGroupName(const std::string& what) {
  static int counter = 0;
  return what + "-" + std::to_string(getpid()) + "-" + std::to_string(++counter);
}

// Runs body(group) on one thread per rank of `agents` over `backend`.
void RunOn(const std::string& backend, const std::vector<std::string>& agents,
           const std::function<void(ProcessGroup&)>& body) {
  auto store = InMemoryStore();
  const std::string name = OrderGroupName(backend);
  RunThreads(static_cast<int>(agents.size()), [&](int r) {
    auto group = ConnectProcessGroup(testing::RankOnAgents(r, agents), store,
                                     {.backend = backend, .rendezvous_timeout = 60s, .name = name});
    body(*group);
  });
}

// Values of wildly different magnitudes and signs, so that adding them in
// another order changes the bits of many sums.
std::vector<float> Operand(int rank, size_t count) {
  std::mt19937 gen(static_cast<uint32_t>(1234 + rank));
  std::uniform_real_distribution<float> mantissa(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-20, 20);
  std::vector<float> out(count);
  for (float& v : out) v = std::ldexp(mantissa(gen), exponent(gen));
  return out;
}

// ((x0 + x1) + x2) + ... per element, on one thread.
std::vector<float> RankOrderSum(int world, size_t count) {
  std::vector<float> sum = Operand(0, count);
  for (int r = 1; r < world; ++r) {
    const std::vector<float> x = Operand(r, count);
    for (size_t i = 0; i < count; ++i) sum[i] += x[i];
  }
  return sum;
}

bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Splits [0, count) into pieces of odd, changing sizes.
std::vector<std::pair<size_t, size_t>> OddPieces(size_t count) {
  std::vector<std::pair<size_t, size_t>> pieces;
  const size_t sizes[] = {1, 7, 333, 65'537, 3, 300'001, 13};
  for (size_t begin = 0, k = 0; begin < count; ++k) {
    const size_t n = std::min(sizes[k % std::size(sizes)], count - begin);
    pieces.emplace_back(begin, n);
    begin += n;
  }
  return pieces;
}

struct Split {
  std::vector<float> whole, pieces, scattered;  // allreduce whole, in pieces, reduce_scatter's block
};

// More than one shared-memory window (512 KiB per rank) and not a multiple of
// the ranks or of a cache line.
constexpr size_t kCount = 3 * 4 * 100'003;

Split AllreduceWholeAndInPieces(ProcessGroup& group) {
  const int r = group.rank();
  Split out;
  out.whole = Operand(r, kCount);
  group.allreduce(std::span<float>(out.whole), ReduceOp::kSum, 60s);
  out.pieces = Operand(r, kCount);
  for (const auto& [begin, n] : OddPieces(kCount))
    group.allreduce(out.pieces.data() + begin, n, DataType::kFloat32, ReduceOp::kSum, 60s);
  const std::vector<float> in = Operand(r, kCount);
  out.scattered = group.reduce_scatter(std::span<const float>(in), ReduceOp::kSum, 60s);
  return out;
}

void ExpectOrderIndependent(const std::string& backend, const std::vector<std::string>& agents,
                            const std::vector<float>* exact) {
  const size_t world = agents.size();
  std::vector<Split> got(world);
  RunOn(backend, agents, [&](ProcessGroup& group) {
    got[static_cast<size_t>(group.rank())] = AllreduceWholeAndInPieces(group);
  });
  const size_t block = kCount / world;
  for (size_t r = 0; r < world; ++r) {
    EXPECT_TRUE(SameBits(got[r].whole, got[0].whole)) << "rank " << r << " has other bits than rank 0";
    EXPECT_TRUE(SameBits(got[r].pieces, got[r].whole)) << "rank " << r << ": pieces differ from the whole";
    const std::vector<float> mine(got[r].whole.begin() + static_cast<std::ptrdiff_t>(r * block),
                                  got[r].whole.begin() + static_cast<std::ptrdiff_t>((r + 1) * block));
    EXPECT_TRUE(SameBits(got[r].scattered, mine))
        << "rank " << r << ": reduce_scatter differs from allreduce";
  }
  if (exact) {
    EXPECT_TRUE(SameBits(got[0].whole, *exact)) << "not the sum in rank order";
  }
}

TEST(CollectivesOrderTest, TheOperandsMakeTheOrderVisible) {
  // Sanity of the test itself: the reverse order changes many sums.
  const std::vector<float> forward = RankOrderSum(4, 10'000);
  std::vector<float> reverse = Operand(3, 10'000);
  for (int r = 2; r >= 0; --r) {
    const std::vector<float> x = Operand(r, 10'000);
    for (size_t i = 0; i < x.size(); ++i) reverse[i] += x[i];
  }
  size_t differ = 0;
  for (size_t i = 0; i < forward.size(); ++i) differ += forward[i] != reverse[i];
  EXPECT_GT(differ, 1000u);
}

TEST(CollectivesOrderTest, SharedMemoryAddsInRankOrderHoweverTheTensorIsSplit) {
  const std::vector<float> exact = RankOrderSum(4, kCount);
  ExpectOrderIndependent("hierarchical", {"host", "host", "host", "host"}, &exact);
  const std::vector<float> three = RankOrderSum(3, kCount);
  ExpectOrderIndependent("hierarchical", {"host", "host", "host"}, &three);
}

TEST(CollectivesOrderTest, HierarchicalAcrossThreeAgentsGivesTheSameBitsHoweverSplit) {
  // Agents {0,1}, {2}, {3}: the leaders' sums go across in agent order.
  ExpectOrderIndependent("hierarchical", {"a", "a", "b", "c"}, nullptr);
  // One rank per agent: the agent order is the rank order.
  const std::vector<float> exact = RankOrderSum(3, kCount);
  ExpectOrderIndependent("hierarchical", {"a", "b", "c"}, &exact);
}

// reduce_scatter of every type and op against a sum computed here.
template <typename T>
void CheckReduceScatter(ProcessGroup& group, size_t count) {
  const auto n = static_cast<size_t>(group.size());
  const int r = group.rank();
  auto value = [](int rank, size_t i) {
    return static_cast<T>((rank + 1) * static_cast<int>(i % 101) - rank);
  };
  std::vector<ReduceOp> ops = {ReduceOp::kSum, ReduceOp::kMin, ReduceOp::kMax};
  if (std::is_floating_point_v<T>) ops.push_back(ReduceOp::kAverage);
  for (ReduceOp op : ops) {
    std::vector<T> in(n * count);
    for (size_t i = 0; i < in.size(); ++i) in[i] = value(r, i);
    std::vector<T> out(count, T{-7});
    group.reduce_scatter(in.data(), out.data(), count, DataTypeOf<T>(), op, 60s);
    for (size_t i = 0; i < count; ++i) {
      const size_t at = static_cast<size_t>(r) * count + i;
      T want = value(0, at);
      for (int k = 1; k < group.size(); ++k) {
        const T v = value(k, at);
        want = op == ReduceOp::kMin ? std::min(want, v) : op == ReduceOp::kMax ? std::max(want, v) : want + v;
      }
      if (op == ReduceOp::kAverage) want /= static_cast<T>(n);
      ASSERT_EQ(out[i], want) << "op " << static_cast<int>(op) << ", element " << i << " on rank " << r;
    }
  }
  // In place: the output is this rank's block of the input.
  std::vector<T> in(n * count);
  for (size_t i = 0; i < in.size(); ++i) in[i] = value(r, i);
  T* mine = in.data() + static_cast<size_t>(r) * count;
  group.reduce_scatter(in.data(), mine, count, DataTypeOf<T>(), ReduceOp::kSum, 60s);
  for (size_t i = 0; i < count; ++i) {
    T want{};
    for (int k = 0; k < group.size(); ++k) want += value(k, static_cast<size_t>(r) * count + i);
    ASSERT_EQ(mine[i], want) << "in place, element " << i << " on rank " << r;
  }
}

void CheckReduceScatterEverywhere(ProcessGroup& group) {
  for (size_t count : {size_t{1}, size_t{1000}, size_t{300'007}}) {
    CheckReduceScatter<float>(group, count);
    CheckReduceScatter<double>(group, count);
    CheckReduceScatter<int32_t>(group, count);
    CheckReduceScatter<int64_t>(group, count);
  }
  group.reduce_scatter(nullptr, nullptr, 0, DataType::kFloat32, ReduceOp::kSum, 60s);  // nothing to do
  std::vector<float> odd(static_cast<size_t>(group.size()) * 2 + 1);
  if (group.size() > 1) {
    EXPECT_THROW(group.reduce_scatter(std::span<const float>(odd)), ConfigError);
  }
  std::vector<int32_t> ints(static_cast<size_t>(group.size()));
  EXPECT_THROW(group.reduce_scatter(ints.data(), ints.data(), 1, DataType::kInt32, ReduceOp::kAverage, 60s),
               ConfigError);
}

TEST(CollectivesReduceScatterTest, Gloo) {
  for (int world : {1, 2, 3, 4})
    RunOn("gloo", std::vector<std::string>(static_cast<size_t>(world), "h"), [](ProcessGroup& group) {
      EXPECT_EQ(group.backend(), "gloo");
      CheckReduceScatterEverywhere(group);
    });
}

TEST(CollectivesReduceScatterTest, Single) {
  auto group = ConnectProcessGroup(testing::RankOnAgents(0, {"a"}), nullptr);
  EXPECT_EQ(group->backend(), "single");
  CheckReduceScatterEverywhere(*group);
}

TEST(CollectivesReduceScatterTest, HierarchicalOnOneAgent) {
  RunOn("hierarchical", {"h", "h", "h"}, [](ProcessGroup& group) { CheckReduceScatterEverywhere(group); });
}

TEST(CollectivesReduceScatterTest, HierarchicalOnSeveralAgents) {
  RunOn("hierarchical", {"x", "y", "x", "y", "z"},
        [](ProcessGroup& group) { CheckReduceScatterEverywhere(group); });
}

// allgather on one agent goes through shared memory: larger than a window,
// and in place.
TEST(CollectivesAllgatherTest, HierarchicalOnOneAgentThroughSharedMemory) {
  RunOn("hierarchical", {"h", "h", "h", "h"}, [](ProcessGroup& group) {
    const size_t count = 300'007;
    const auto n = static_cast<size_t>(group.size());
    std::vector<int32_t> mine(count);
    for (size_t i = 0; i < count; ++i) mine[i] = group.rank() * 1'000'000 + static_cast<int32_t>(i);
    const auto all = group.allgather(std::span<const int32_t>(mine), 60s);
    for (size_t k = 0; k < n; ++k)
      for (size_t i = 0; i < count; ++i)
        ASSERT_EQ(all[k * count + i], static_cast<int32_t>(k * 1'000'000 + i)) << "block " << k;
    std::vector<int32_t> out(n * count, -1);
    std::copy(mine.begin(), mine.end(), out.begin() + static_cast<std::ptrdiff_t>(group.rank()) * count);
    group.allgather(out.data() + static_cast<size_t>(group.rank()) * count, out.data(), count,
                    DataType::kInt32, 60s);
    EXPECT_EQ(out, all);
  });
}

}  // namespace
}  // namespace ring::trial
