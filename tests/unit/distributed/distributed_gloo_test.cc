// Process groups whose ranks are threads of this process, connected over real
// TCP sockets on 127.0.0.1 through an in-memory store: every collective for
// world sizes 1 to 4 against a computed expectation, timeouts, argument
// errors, and the backends ConnectProcessGroup chooses.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <latch>
#include <numeric>
#include <string>
#include <thread>
#include <typeinfo>
#include <vector>

#include "ring/trial/distributed.h"
#include "ring/trial/errors.h"
#include "tests/unit/distributed/distributed_thread_ranks.h"

namespace ring::trial {
namespace {

using namespace std::chrono_literals;
using testing::LoopbackRank;
using testing::RunGroup;
using testing::RunThreads;

// Small integers: every sum is exact in every type, whatever the order.
template <typename T>
T Value(int rank, size_t i) {
  return static_cast<T>(static_cast<int>((i * 7 + static_cast<size_t>(rank) * 3) % 17) - 8);
}

template <typename T>
std::vector<T> Expected(int world, size_t count, ReduceOp op) {
  std::vector<T> out(count);
  for (size_t i = 0; i < count; ++i) {
    T acc = Value<T>(0, i);
    for (int r = 1; r < world; ++r) {
      const T v = Value<T>(r, i);
      if (op == ReduceOp::kSum || op == ReduceOp::kAverage) acc += v;
      if (op == ReduceOp::kMin) acc = std::min(acc, v);
      if (op == ReduceOp::kMax) acc = std::max(acc, v);
    }
    if (op == ReduceOp::kAverage) acc /= static_cast<T>(world);
    out[i] = acc;
  }
  return out;
}

const char* OpName(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return "sum";
    case ReduceOp::kAverage:
      return "average";
    case ReduceOp::kMin:
      return "min";
    case ReduceOp::kMax:
      return "max";
  }
  return "?";
}

template <typename T>
void CheckAllreduce(ProcessGroup& group, size_t count) {
  std::vector<ReduceOp> ops = {ReduceOp::kSum, ReduceOp::kMin, ReduceOp::kMax};
  if (std::is_floating_point_v<T>) ops.push_back(ReduceOp::kAverage);
  for (ReduceOp op : ops) {
    std::vector<T> data(count);
    for (size_t i = 0; i < count; ++i) data[i] = Value<T>(group.rank(), i);
    group.allreduce(std::span<T>(data), op, 30s);
    const auto want = Expected<T>(group.size(), count, op);
    size_t wrong = 0, first = count;
    for (size_t i = 0; i < count; ++i)
      if (data[i] != want[i] && wrong++ == 0) first = i;
    EXPECT_EQ(wrong, 0u) << OpName(op) << " of " << count << " " << typeid(T).name() << " on rank "
                         << group.rank() << " of " << group.size() << ": first wrong element " << first
                         << (first < count ? " = " + std::to_string(data[first]) + ", want " +
                                                 std::to_string(want[first])
                                           : "");
  }
}

struct GroupCase {
  int world;
  std::string backend;   // as asked for
  std::string expected;  // as connected
};

class DistributedGroupTest : public ::testing::TestWithParam<GroupCase> {
 protected:
  ProcessGroupOptions Options() const {
    ProcessGroupOptions o;
    o.backend = GetParam().backend;
    o.rendezvous_timeout = 30s;
    return o;
  }
};

TEST_P(DistributedGroupTest, ConnectsTheBackendAskedFor) {
  RunGroup(GetParam().world, Options(), [&](ProcessGroup& group) {
    EXPECT_EQ(group.backend(), GetParam().expected);
    EXPECT_EQ(group.size(), GetParam().world);
  });
}

TEST_P(DistributedGroupTest, AllreduceEveryTypeOpAndSize) {
  RunGroup(GetParam().world, Options(), [](ProcessGroup& group) {
    for (size_t count : {size_t{1}, size_t{1000}, size_t{1} << 20}) {
      CheckAllreduce<float>(group, count);
      CheckAllreduce<double>(group, count);
      CheckAllreduce<int32_t>(group, count);
      CheckAllreduce<int64_t>(group, count);
    }
  });
}

TEST_P(DistributedGroupTest, BroadcastFromTheLastRank) {
  RunGroup(GetParam().world, Options(), [](ProcessGroup& group) {
    const int root = group.size() - 1;
    for (size_t count : {size_t{1}, size_t{1000}, size_t{1} << 20}) {
      std::vector<float> floats(count, -1.0f);
      std::vector<int64_t> ints(count, -1);
      if (group.rank() == root) {
        for (size_t i = 0; i < count; ++i) floats[i] = static_cast<float>(i % 1000) * 0.5f;
        std::iota(ints.begin(), ints.end(), int64_t{1} << 40);
      }
      group.broadcast(std::span<float>(floats), root, 30s);
      group.broadcast(std::span<int64_t>(ints), root, 30s);
      for (size_t i = 0; i < count; ++i) {
        ASSERT_EQ(floats[i], static_cast<float>(i % 1000) * 0.5f)
            << "element " << i << " on rank " << group.rank();
        ASSERT_EQ(ints[i], (int64_t{1} << 40) + static_cast<int64_t>(i)) << "element " << i;
      }
    }
  });
}

TEST_P(DistributedGroupTest, AllgatherIsInRankOrder) {
  RunGroup(GetParam().world, Options(), [](ProcessGroup& group) {
    const size_t count = 1000;
    const auto n = static_cast<size_t>(group.size());
    std::vector<int32_t> mine(count);
    for (size_t i = 0; i < count; ++i) mine[i] = group.rank() * 100000 + static_cast<int32_t>(i);
    const auto all = group.allgather(std::span<const int32_t>(mine), 30s);
    ASSERT_EQ(all.size(), n * count);
    for (size_t r = 0; r < n; ++r)
      for (size_t i = 0; i < count; ++i) ASSERT_EQ(all[r * count + i], static_cast<int32_t>(r * 100000 + i));
    // In place: this rank's part already sits in the output.
    std::vector<double> out(n * count, -1.0);
    for (size_t i = 0; i < count; ++i)
      out[static_cast<size_t>(group.rank()) * count + i] = group.rank() + i * 0.25;
    group.allgather(out.data() + static_cast<size_t>(group.rank()) * count, out.data(), count,
                    DataType::kFloat64, 30s);
    for (size_t r = 0; r < n; ++r)
      for (size_t i = 0; i < count; ++i) ASSERT_EQ(out[r * count + i], static_cast<double>(r) + i * 0.25);
  });
}

TEST_P(DistributedGroupTest, BarrierWaitsForEveryRank) {
  const int world = GetParam().world;
  std::vector<std::atomic<bool>> arrived(static_cast<size_t>(world));
  RunGroup(world, Options(), [&](ProcessGroup& group) {
    std::this_thread::sleep_for(std::chrono::milliseconds(150 * group.rank()));
    arrived[static_cast<size_t>(group.rank())] = true;
    group.barrier(30s);
    for (int r = 0; r < world; ++r)
      EXPECT_TRUE(arrived[static_cast<size_t>(r)])
          << "rank " << group.rank() << " left the barrier before rank " << r << " arrived";
  });
}

TEST_P(DistributedGroupTest, ManyMixedCollectivesInARow) {
  RunGroup(GetParam().world, Options(), [](ProcessGroup& group) {
    for (int step = 0; step < 200; ++step) {
      std::vector<int64_t> v = {step, group.rank()};
      group.allreduce(std::span<int64_t>(v), ReduceOp::kSum, 30s);
      const int64_t n = group.size();
      ASSERT_EQ(v[0], step * n);
      ASSERT_EQ(v[1], n * (n - 1) / 2);
      std::vector<float> b = {group.rank() == step % group.size() ? float(step) : -1.0f};
      group.broadcast(std::span<float>(b), step % group.size(), 30s);
      ASSERT_EQ(b[0], float(step));
      if (step % 10 == 0) group.barrier(30s);
    }
  });
}

TEST_P(DistributedGroupTest, BadArgumentsFailBeforeCommunicatingAndLeaveTheGroupUsable) {
  RunGroup(GetParam().world, Options(), [](ProcessGroup& group) {
    std::vector<int32_t> ints = {1, 2};
    try {
      group.allreduce(std::span<int32_t>(ints), ReduceOp::kAverage, 30s);
      ADD_FAILURE() << "average of int32 accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("int32"), std::string::npos) << e.what();
    }
    try {
      group.broadcast(std::span<int32_t>(ints), group.size(), 30s);
      ADD_FAILURE() << "root outside the group accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("root " + std::to_string(group.size())), std::string::npos)
          << e.what();
    }
    EXPECT_THROW(group.barrier(0ms), ConfigError);
    EXPECT_THROW(group.allreduce(nullptr, 3, DataType::kFloat32, ReduceOp::kSum, 30s), ConfigError);
    // Zero elements is a no-op, and the group still works.
    group.allreduce(nullptr, 0, DataType::kFloat32, ReduceOp::kSum, 30s);
    group.allreduce(std::span<int32_t>(ints), ReduceOp::kSum, 30s);
    EXPECT_EQ(ints, (std::vector<int32_t>{group.size(), 2 * group.size()}));
  });
}

INSTANTIATE_TEST_SUITE_P(WorldSizes, DistributedGroupTest,
                         ::testing::Values(GroupCase{1, "auto", "single"}, GroupCase{1, "gloo", "gloo"},
                                           GroupCase{2, "gloo", "gloo"}, GroupCase{3, "auto", "gloo"},
                                           GroupCase{4, "gloo", "gloo"}),
                         [](const auto& info) {
                           return "World" + std::to_string(info.param.world) + "_" + info.param.backend;
                         });

TEST(DistributedGlooTest, ARankThatNeverCallsTimesTheOthersOut) {
  constexpr int kWorld = 3;
  auto store = InMemoryStore();
  std::latch others_done(kWorld - 1);
  RunThreads(kWorld, [&](int rank) {
    // Rank 2 leaves once the others are done, whatever happened to them.
    struct Done {
      std::latch& latch;
      bool counts;
      ~Done() {
        if (counts) latch.count_down();
      }
    } done{others_done, rank != kWorld - 1};
    auto group = ConnectProcessGroup(LoopbackRank(rank, kWorld), store);
    if (rank == kWorld - 1) {  // never calls
      others_done.wait();
      return;
    }
    std::vector<float> data(1000, 1.0f);
    const auto t0 = std::chrono::steady_clock::now();
    try {
      group->allreduce(std::span<float>(data), ReduceOp::kSum, 1s);
      ADD_FAILURE() << "rank " << rank << " finished an allreduce without rank 2";
    } catch (const CollectiveError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("allreduce (sum of 1000 float32) failed on rank " + std::to_string(rank) + " of 3"),
                std::string::npos)
          << what;
      EXPECT_NE(what.find("timeout 1 s"), std::string::npos) << what;
    }
    const auto waited = std::chrono::steady_clock::now() - t0;
    EXPECT_GE(waited, 900ms);
    EXPECT_LT(waited, 5s);
    // The group refuses work after a failure.
    try {
      group->barrier(30s);
      ADD_FAILURE() << "a broken group ran a barrier";
    } catch (const CollectiveError& e) {
      EXPECT_NE(std::string(e.what()).find("unusable"), std::string::npos) << e.what();
    }
  });
}

TEST(DistributedGlooTest, RanksCallingDifferentCollectivesTimeOut) {
  auto store = InMemoryStore();
  RunThreads(2, [&](int rank) {
    auto group = ConnectProcessGroup(LoopbackRank(rank, 2), store);
    std::vector<float> data(100, 1.0f);
    if (rank == 0) {
      EXPECT_THROW(group->allreduce(std::span<float>(data), ReduceOp::kSum, 1s), CollectiveError);
    } else {
      EXPECT_THROW(group->broadcast(std::span<float>(data), 0, 1s), CollectiveError);
    }
  });
}

TEST(DistributedGlooTest, AnAddressThisHostDoesNotHaveIsAConfigError) {
  auto self = LoopbackRank(0, 1);
  self.address = "203.0.113.7";  // TEST-NET-3: never a local address; nothing is sent
  ProcessGroupOptions options;
  options.backend = "gloo";
  try {
    ConnectProcessGroup(self, InMemoryStore(), options);
    FAIL() << "bound a foreign address";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot listen on address 203.0.113.7"), std::string::npos)
        << e.what();
  }
}

TEST(DistributedSingleTest, WorldSizeOneNeedsNoStore) {
  auto group = ConnectProcessGroup(LoopbackRank(0, 1), nullptr);
  EXPECT_EQ(group->backend(), "single");
  EXPECT_EQ(group->rank(), 0);
  std::vector<double> v = {1.5, -2.0};
  group->allreduce(std::span<double>(v), ReduceOp::kAverage);
  EXPECT_EQ(v, (std::vector<double>{1.5, -2.0}));
  std::vector<int64_t> ints = {7};
  EXPECT_THROW(group->allreduce(std::span<int64_t>(ints), ReduceOp::kAverage), ConfigError);
  EXPECT_THROW(group->broadcast(std::span<int64_t>(ints), 1), ConfigError);
  EXPECT_EQ(group->allgather(std::span<const int64_t>(ints)), ints);
  group->barrier(1s);
}

TEST(DistributedConnectTest, RefusesBadRequestsWithoutWaiting) {
  auto expect_config_error = [](const RankInfo& self, std::shared_ptr<KeyValueStore> store,
                                const ProcessGroupOptions& options, const std::string& named) {
    const auto t0 = std::chrono::steady_clock::now();
    try {
      ConnectProcessGroup(self, std::move(store), options);
      ADD_FAILURE() << "accepted: " << named;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(named), std::string::npos) << e.what();
    }
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s);
  };
  ProcessGroupOptions nccl_typo;
  nccl_typo.backend = "ncl";
  expect_config_error(LoopbackRank(0, 2), InMemoryStore(), nccl_typo,
                      "unknown process group backend \"ncl\"; known: auto, gloo");
  ProcessGroupOptions single;
  single.backend = "single";
  expect_config_error(LoopbackRank(0, 2), InMemoryStore(), single, "world size of 1, not 2");
  expect_config_error(LoopbackRank(0, 2), nullptr, {}, "needs a key-value store");
  expect_config_error(LoopbackRank(2, 2), InMemoryStore(), {}, "rank 2 is not within world size 2");
  ProcessGroupOptions bad_name;
  bad_name.name = "my group";
  expect_config_error(LoopbackRank(0, 2), InMemoryStore(), bad_name, "\"my group\"");
  ProcessGroupOptions no_wait;
  no_wait.rendezvous_timeout = 0ms;
  expect_config_error(LoopbackRank(0, 2), InMemoryStore(), no_wait, "timeout must be positive");
  auto no_address = LoopbackRank(0, 2);
  no_address.address.clear();
  expect_config_error(no_address, InMemoryStore(), {}, "RING_AGENT_ADDR");
}

TEST(DistributedConnectTest, GroupsOfDistinctNamesShareAStore) {
  auto store = InMemoryStore();
  RunThreads(2, [&](int rank) {
    ProcessGroupOptions a, b;
    a.name = "data";
    b.name = "model";
    auto first = ConnectProcessGroup(LoopbackRank(rank, 2), store, a);
    auto second = ConnectProcessGroup(LoopbackRank(rank, 2), store, b);
    std::vector<int32_t> x = {rank + 1};
    first->allreduce(std::span<int32_t>(x));
    second->allreduce(std::span<int32_t>(x));
    EXPECT_EQ(x[0], 6);  // (1 + 2) on each rank, then summed again
  });
  EXPECT_TRUE(store->check({"data/rank/0", "data/rank/1", "model/rank/0", "model/rank/1"}));
}

}  // namespace
}  // namespace ring::trial
