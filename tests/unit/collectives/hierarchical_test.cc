// The hierarchical backend: 4 ranks as 2 agents x 2 local ranks (distinct
// agent ids, all on 127.0.0.1) give the results the gloo backend gives, as
// threads and as processes; "auto" chooses it only when an agent runs more
// than one rank; the host topology is checked; a missing rank fails the
// others within the timeout; nothing is left in /dev/shm.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "distributed/hierarchical/hierarchical_topology.h"
#include "ring/trial/distributed.h"
#include "ring/trial/errors.h"
#include "ring/trial/kv_store.h"
#include "tests/unit/distributed/distributed_thread_ranks.h"

namespace ring::trial {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::RunThreads;

std::vector<std::string> ShmEntries(const std::string& text) {
  std::vector<std::string> out;
  for (const auto& entry : fs::directory_iterator("/dev/shm"))
    if (entry.path().filename().string().find(text) != std::string::npos)
      out.push_back(entry.path().string());
  return out;
}

std::string UniqueName(const std::string& what) {
  static int counter = 0;
  return what + "-" + std::to_string(getpid()) + "-" + std::to_string(++counter);
}

// Every collective once or more, on values that differ per rank; the outputs
// in order. Large enough for several shared-memory windows.
std::vector<double> Script(ProcessGroup& group) {
  const int r = group.rank();
  std::vector<double> out;
  auto keep = [&](const auto& values) { out.insert(out.end(), values.begin(), values.end()); };

  std::vector<float> floats((1 << 19) + 3);
  for (size_t i = 0; i < floats.size(); ++i)
    floats[i] = static_cast<float>((r * 7919 + static_cast<int>(i) * 31) % 1000) / 7.0f;
  group.allreduce(std::span<float>(floats), ReduceOp::kSum);
  keep(floats);
  std::vector<double> doubles(1000);
  for (size_t i = 0; i < doubles.size(); ++i) doubles[i] = std::sin(static_cast<double>(r * 1000 + i));
  group.allreduce(std::span<double>(doubles), ReduceOp::kAverage);
  keep(doubles);
  std::vector<int64_t> longs{r * 10, -r, 7};
  group.allreduce(std::span<int64_t>(longs), ReduceOp::kMax);
  keep(longs);
  std::vector<int32_t> ints{r * 10, -r, 7, 1 << r};
  group.allreduce(std::span<int32_t>(ints), ReduceOp::kMin);
  keep(ints);
  ints = {r, r, r, 1 << r};
  group.allreduce(std::span<int32_t>(ints), ReduceOp::kSum);
  keep(ints);
  for (int root : {group.size() - 1, 0, group.size() / 2}) {
    std::vector<float> values(3000, static_cast<float>(r) + 0.25f);
    group.broadcast(std::span<float>(values), root);
    keep(values);
  }
  const std::vector<int32_t> mine{r, r * r, -r};
  keep(group.allgather(std::span<const int32_t>(mine)));
  group.barrier(kDefaultCollectiveTimeout);
  return out;
}

void ExpectSameResults(const std::vector<std::vector<double>>& got,
                       const std::vector<std::vector<double>>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t r = 0; r < got.size(); ++r) {
    ASSERT_EQ(got[r].size(), want[r].size()) << "rank " << r;
    for (size_t i = 0; i < got[r].size(); ++i)
      ASSERT_NEAR(got[r][i], want[r][i], 1e-5 * std::max(1.0, std::abs(want[r][i])))
          << "rank " << r << ", output " << i;
  }
}

// Runs Script on threads, one per rank, over `backend`.
std::vector<std::vector<double>> RunScript(const std::string& backend, const std::vector<std::string>& agents,
                                           const std::string& expected_backend = "") {
  const int world = static_cast<int>(agents.size());
  std::vector<std::vector<double>> results(static_cast<size_t>(world));
  auto store = InMemoryStore();
  const std::string name = UniqueName("script");
  RunThreads(world, [&](int r) {
    auto group = ConnectProcessGroup(testing::RankOnAgents(r, agents), store,
                                     {.backend = backend, .rendezvous_timeout = 60s, .name = name});
    EXPECT_EQ(group->backend(), expected_backend.empty() ? backend : expected_backend);
    EXPECT_EQ(group->rank(), r);
    EXPECT_EQ(group->size(), world);
    results[static_cast<size_t>(r)] = Script(*group);
  });
  EXPECT_TRUE(ShmEntries(name).empty()) << ShmEntries(name)[0];
  return results;
}

TEST(HierarchicalTest, TwoAgentsOfTwoRanksMatchGloo) {
  const std::vector<std::string> agents{"agent-a", "agent-a", "agent-b", "agent-b"};
  const auto want = RunScript("gloo", agents);
  ExpectSameResults(RunScript("hierarchical", agents), want);
  // Integer sums are exact whatever the order: ranks 0..3 and 1+2+4+8.
  EXPECT_EQ(want[2][(1 << 19) + 3 + 1000 + 3 + 4], 6.0);
  EXPECT_EQ(want[2][(1 << 19) + 3 + 1000 + 3 + 4 + 3], 15.0);
}

TEST(HierarchicalTest, InterleavedAgentsAndUnevenCountsMatchGloo) {
  // Ranks 0 and 2 share one agent, 1 and 3 and 4 another, 5 is alone.
  const std::vector<std::string> agents{"x", "y", "x", "y", "y", "z"};
  ExpectSameResults(RunScript("hierarchical", agents), RunScript("gloo", agents));
}

TEST(HierarchicalTest, OneRankPerAgentBehavesLikeGloo) {
  const std::vector<std::string> agents{"a", "b", "c"};
  ExpectSameResults(RunScript("hierarchical", agents), RunScript("gloo", agents));
}

TEST(HierarchicalTest, OneAgentWithEveryRankMatchesGloo) {
  const std::vector<std::string> agents{"host", "host", "host", "host"};
  ExpectSameResults(RunScript("hierarchical", agents), RunScript("gloo", agents));
}

TEST(HierarchicalTest, AutoChoosesHierarchicalOnlyWhenAnAgentRunsSeveralRanks) {
  RunScript("auto", {"a", "a", "b"}, "hierarchical");
  RunScript("auto", {"a", "b", "c"}, "gloo");
  auto single = ConnectProcessGroup(testing::RankOnAgents(0, {"a"}), nullptr, {.backend = "auto"});
  EXPECT_EQ(single->backend(), "single");
}

TEST(HierarchicalTest, TopologyComesFromTheRecordsAlone) {
  auto record = [](int rank, const std::string& agent, int local, int locals) {
    detail::RankRecord r;
    r.rank = rank;
    r.world_size = 5;
    r.local_rank = local;
    r.local_world_size = locals;
    r.agent_id = agent;
    r.address = "127.0.0.1";
    return r;
  };
  // Agents are numbered by their lowest rank; ranks within by local rank.
  const auto topology =
      detail::BuildHostTopology({record(0, "b", 1, 2), record(1, "a", 0, 2), record(2, "b", 0, 2),
                                 record(3, "a", 1, 2), record(4, "c", 0, 1)});
  ASSERT_EQ(topology.agents.size(), 3u);
  EXPECT_EQ(topology.agents[0].agent_id, "b");
  EXPECT_EQ(topology.agents[0].ranks, (std::vector<int>{2, 0}));
  EXPECT_EQ(topology.agents[1].ranks, (std::vector<int>{1, 3}));
  EXPECT_EQ(topology.agents[2].ranks, (std::vector<int>{4}));
  EXPECT_EQ(topology.agent_of, (std::vector<int>{0, 1, 0, 1, 2}));
  EXPECT_EQ(topology.leader_of(0), 2);
  EXPECT_TRUE(detail::PreferHierarchical({record(0, "a", 0, 2), record(1, "a", 1, 2)}));
  EXPECT_FALSE(detail::PreferHierarchical({record(0, "a", 0, 1), record(1, "b", 0, 1)}));
  EXPECT_FALSE(detail::PreferHierarchical({record(0, "", 0, 2), record(1, "", 1, 2)}));

  auto message = [&](const std::vector<detail::RankRecord>& records) {
    try {
      detail::BuildHostTopology(records);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({record(0, "a", 0, 2), record(1, "a", 1, 3)})
                .find("disagree on LOCAL_WORLD_SIZE: rank 1 has 3"),
            std::string::npos);
  EXPECT_NE(
      message({record(0, "a", 0, 2), record(1, "a", 0, 2)}).find("ranks 0 and 1 both have local rank 0"),
      std::string::npos);
  EXPECT_NE(message({record(0, "a", 0, 3), record(1, "a", 1, 3)}).find("should run 3 ranks"),
            std::string::npos);
  EXPECT_NE(message({record(0, "", 0, 1)}).find("no agent id"), std::string::npos);
}

TEST(HierarchicalTest, AMissingRankFailsTheOthersWithinTheTimeout) {
  const std::vector<std::string> agents{"a", "a", "b", "b"};
  auto store = InMemoryStore();
  const std::string name = UniqueName("missing");
  std::atomic<int> done{0};
  RunThreads(4, [&](int r) {
    auto group = ConnectProcessGroup(testing::RankOnAgents(r, agents), store,
                                     {.backend = "hierarchical", .name = name});
    if (r == 3) {  // a non-leader that never reduces
      while (done.load() < 3) std::this_thread::sleep_for(5ms);
      return;
    }
    std::vector<float> data(1000, 1.0f);
    const auto t0 = std::chrono::steady_clock::now();
    try {
      group->allreduce(std::span<float>(data), ReduceOp::kSum, 1s);
      ADD_FAILURE() << "rank " << r << " finished without rank 3";
    } catch (const CollectiveError& e) {
      EXPECT_LT(std::chrono::steady_clock::now() - t0, 8s) << "rank " << r;
      EXPECT_NE(std::string(e.what()).find("failed on rank " + std::to_string(r) + " of 4 in process group " +
                                           name),
                std::string::npos)
          << e.what();
      if (r == 2) {
        EXPECT_NE(std::string(e.what()).find("local rank 1 did not arrive"), std::string::npos) << e.what();
      }
    }
    EXPECT_THROW(group->barrier(1s), CollectiveError) << "unusable after a failure";
    done.fetch_add(1);
  });
  EXPECT_TRUE(ShmEntries(name).empty());
}

TEST(HierarchicalTest, BadArgumentsAreRefusedBeforeAnyCommunication) {
  auto store = InMemoryStore();
  RunThreads(2, [&](int r) {
    auto group =
        ConnectProcessGroup(testing::RankOnAgents(r, {"a", "a"}), store, {.backend = "hierarchical"});
    std::vector<int32_t> ints(4, 1);
    EXPECT_THROW(group->allreduce(std::span<int32_t>(ints), ReduceOp::kAverage), ConfigError);
    EXPECT_THROW(group->broadcast(std::span<int32_t>(ints), 2), ConfigError);
    EXPECT_THROW(group->allreduce(nullptr, 3, DataType::kFloat32, ReduceOp::kSum, 1s), ConfigError);
    group->allreduce(std::span<int32_t>(ints), ReduceOp::kSum);  // still usable
    EXPECT_EQ(ints, (std::vector<int32_t>{2, 2, 2, 2}));
  });
}

TEST(HierarchicalTest, GroupNamesUpTo100CharactersConnect) {
  const std::string longest(100, 'n');
  auto store = InMemoryStore();
  RunThreads(4, [&](int r) {
    auto group = ConnectProcessGroup(testing::RankOnAgents(r, {"a", "a", "b", "b"}), store,
                                     {.backend = "hierarchical", .name = longest});
    std::vector<int64_t> x{r};
    group->allreduce(std::span<int64_t>(x));
    EXPECT_EQ(x[0], 6);
  });
  try {
    ConnectProcessGroup(testing::RankOnAgents(0, {"a"}), InMemoryStore(),
                        {.backend = "hierarchical", .name = longest + "n"});
    ADD_FAILURE() << "a 101-character name was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("has 101 characters; this backend allows at most 100"),
              std::string::npos)
        << e.what();
  }
}

TEST(HierarchicalTest, ProcessesOnTwoAgentsAllreduceThroughAFileStore) {
  char dir_template[] = "/tmp/ring-hier-XXXXXX";
  const std::string dir = mkdtemp(dir_template);
  const std::string name = UniqueName("processes");
  const std::vector<std::string> agents{"agent-a", "agent-b", "agent-a", "agent-b"};
  constexpr size_t kCount = size_t{1} << 21;
  std::vector<pid_t> pids;
  for (int r = 0; r < 4; ++r) {
    const pid_t pid = fork();
    if (pid == 0) {
      int code = 0;
      try {
        auto group =
            ConnectProcessGroup(testing::RankOnAgents(r, agents), FileStore(dir),
                                {.backend = "hierarchical", .rendezvous_timeout = 60s, .name = name});
        std::vector<float> data(kCount);
        for (size_t i = 0; i < kCount; ++i) data[i] = static_cast<float>(r + static_cast<int>(i % 5));
        group->allreduce(std::span<float>(data), ReduceOp::kAverage, 60s);
        for (size_t i = 0; i < kCount && code == 0; ++i)
          if (data[i] != 1.5f + static_cast<float>(i % 5)) code = 2;
        group->barrier(60s);
      } catch (const std::exception& e) {
        fprintf(stderr, "rank %d: %s\n", r, e.what());
        code = 3;
      }
      _exit(code);
    }
    pids.push_back(pid);
  }
  const auto deadline = std::chrono::steady_clock::now() + 90s;
  for (int r = 0; r < 4; ++r) {
    int status = 0;
    while (waitpid(pids[static_cast<size_t>(r)], &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        kill(pids[static_cast<size_t>(r)], SIGKILL);
        waitpid(pids[static_cast<size_t>(r)], &status, 0);
        break;
      }
      std::this_thread::sleep_for(10ms);
    }
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "rank " << r << " status " << status;
  }
  EXPECT_TRUE(ShmEntries(name).empty());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ring::trial
