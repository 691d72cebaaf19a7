// Rendezvous of the ranks of a group through a store: what every rank
// learns about the others, and the errors when ranks do not arrive, disagree
// on the world size, or claim one rank twice.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "distributed/rendezvous.h"
#include "ring/trial/distributed.h"
#include "ring/trial/errors.h"
#include "tests/unit/distributed/distributed_thread_ranks.h"

namespace ring::trial {
namespace {

using namespace std::chrono_literals;
using testing::LoopbackRank;
using testing::RunThreads;

ProcessGroupOptions Within(std::chrono::milliseconds timeout) {
  ProcessGroupOptions o;
  o.rendezvous_timeout = timeout;
  return o;
}

TEST(DistributedRendezvousTest, EveryRankLearnsEveryRecord) {
  auto store = InMemoryStore();
  std::vector<std::vector<detail::RankRecord>> seen(3);
  RunThreads(3, [&](int rank) {
    auto self = LoopbackRank(rank, 3);
    self.agent_id = rank < 2 ? "node-a" : "node-b";
    self.local_rank = rank < 2 ? rank : 0;
    self.local_world_size = rank < 2 ? 2 : 1;
    seen[static_cast<size_t>(rank)] =
        detail::Rendezvous(self, *store, "g", std::chrono::steady_clock::now() + 10s, 10s);
  });
  for (const auto& records : seen) {
    ASSERT_EQ(records.size(), 3u);
    for (int r = 0; r < 3; ++r) {
      const auto& rec = records[static_cast<size_t>(r)];
      EXPECT_EQ(rec.rank, r);
      EXPECT_EQ(rec.world_size, 3);
      EXPECT_EQ(rec.agent_id, r < 2 ? "node-a" : "node-b");
      EXPECT_EQ(rec.local_rank, r < 2 ? r : 0);
      EXPECT_EQ(rec.address, "127.0.0.1");
      EXPECT_EQ(rec.pid, ::getpid());
      EXPECT_EQ(rec.nonce, seen[0][static_cast<size_t>(r)].nonce);
    }
  }
  // The records are JSON under "<group>/rank/<r>".
  const auto bytes = store->get("g/rank/2", 0ms);
  const auto j = nlohmann::json::parse(bytes.begin(), bytes.end());
  EXPECT_EQ(j["agent_id"], "node-b");
  EXPECT_EQ(j["world_size"], 3);
}

TEST(DistributedRendezvousTest, TimeoutNamesTheRanksThatNeverArrived) {
  auto store = InMemoryStore();
  RunThreads(2, [&](int rank) {
    const auto t0 = std::chrono::steady_clock::now();
    try {
      ConnectProcessGroup(LoopbackRank(rank, 4), store, Within(1s));
      ADD_FAILURE() << "rank " << rank << " connected without ranks 2 and 3";
    } catch (const RendezvousError& e) {
      EXPECT_STREQ(e.what(),
                   "rendezvous of group default timed out after 1 s: ranks 2 and 3 of 4 never arrived");
    }
    const auto waited = std::chrono::steady_clock::now() - t0;
    EXPECT_GE(waited, 950ms);
    EXPECT_LT(waited, 4s);
  });
}

TEST(DistributedRendezvousTest, RanksThatArriveLateWithinTheTimeoutStillConnect) {
  auto store = InMemoryStore();
  RunThreads(3, [&](int rank) {
    std::this_thread::sleep_for(std::chrono::milliseconds(400 * rank));
    auto group = ConnectProcessGroup(LoopbackRank(rank, 3), store, Within(10s));
    std::vector<int32_t> x = {1};
    group->allreduce(std::span<int32_t>(x));
    EXPECT_EQ(x[0], 3);
  });
}

TEST(DistributedRendezvousTest, RanksMustAgreeOnTheWorldSize) {
  auto store = InMemoryStore();
  auto odd_one = std::async(std::launch::async, [&] {
    // Started with WORLD_SIZE 3: it waits for a rank 2 that never comes.
    EXPECT_THROW(ConnectProcessGroup(LoopbackRank(1, 3), store, Within(1500ms)), RendezvousError);
  });
  try {
    ConnectProcessGroup(LoopbackRank(0, 2), store, Within(10s));
    FAIL() << "rank 0 connected with a rank of another world size";
  } catch (const RendezvousError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("disagree on the world size: rank 1"), std::string::npos) << what;
    EXPECT_NE(what.find("has 3, rank 0 has 2"), std::string::npos) << what;
  }
  odd_one.get();
}

TEST(DistributedRendezvousTest, AGroupNameOrRankIsUsedOnce) {
  auto store = InMemoryStore();
  // Rank 0 waits for rank 1; meanwhile a second process claims rank 0.
  auto first = std::async(std::launch::async, [&] { return ConnectProcessGroup(LoopbackRank(0, 2), store); });
  while (!store->check({"default/rank/0"})) std::this_thread::sleep_for(5ms);
  try {
    ConnectProcessGroup(LoopbackRank(0, 2), store);
    FAIL() << "a second rank 0 joined";
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("rank 0 of process group default is already in the store"), std::string::npos)
        << what;
    EXPECT_NE(what.find("started with RANK 0"), std::string::npos) << what;
  }
  auto second = ConnectProcessGroup(LoopbackRank(1, 2), store);
  auto group = first.get();
  EXPECT_EQ(group->backend(), "gloo");
  // Connecting "default" again in this store is refused the same way.
  EXPECT_THROW(ConnectProcessGroup(LoopbackRank(1, 2), store), ConfigError);
}

TEST(DistributedRendezvousTest, TwoProcessesRacingForOneRankAreCaught) {
  // Both claimants check the store before either writes; the one whose
  // record was replaced finds out.
  auto store = InMemoryStore();
  store->set("g/rank/1", [] {
    const std::string rec =
        R"({"rank":1,"world_size":2,"local_rank":1,"local_world_size":2,"agent_id":"a","address":"127.0.0.1","pid":1,"nonce":"x"})";
    return KeyValueStore::Bytes(rec.begin(), rec.end());
  }());
  // A store that replaces rank 0's record right after this rank wrote it.
  class Racing final : public KeyValueStore {
   public:
    explicit Racing(std::shared_ptr<KeyValueStore> inner) : inner_(std::move(inner)) {}
    void set(const std::string& key, const Bytes& value) override {
      inner_->set(key, value);
      const std::string rec =
          R"({"rank":0,"world_size":2,"local_rank":0,"local_world_size":2,"agent_id":"b","address":"10.1.1.1","pid":42,"nonce":"other"})";
      if (key == "g/rank/0") inner_->set(key, Bytes(rec.begin(), rec.end()));
    }
    Bytes get(const std::string& key, std::chrono::milliseconds t) override { return inner_->get(key, t); }
    bool check(const std::vector<std::string>& keys) override { return inner_->check(keys); }

   private:
    std::shared_ptr<KeyValueStore> inner_;
  } racing(store);
  try {
    detail::Rendezvous(LoopbackRank(0, 2), racing, "g", std::chrono::steady_clock::now() + 5s, 5s);
    FAIL() << "a replaced record went unnoticed";
  } catch (const RendezvousError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("two processes claim rank 0 of process group g"), std::string::npos) << what;
    EXPECT_NE(what.find("pid 42 on agent b at 10.1.1.1"), std::string::npos) << what;
  }
}

TEST(DistributedRendezvousTest, ARecordThisRuntimeDidNotWriteIsReported) {
  auto store = InMemoryStore();
  store->set("default/rank/1", {'n', 'o', 'p', 'e'});
  try {
    ConnectProcessGroup(LoopbackRank(0, 2), store, Within(5s));
    FAIL();
  } catch (const RendezvousError& e) {
    EXPECT_NE(std::string(e.what()).find("record of rank 1 in process group default"), std::string::npos)
        << e.what();
  }
}

TEST(DistributedRendezvousTest, DescribesRanksCompactly) {
  EXPECT_EQ(detail::DescribeRanks({3}), "rank 3");
  EXPECT_EQ(detail::DescribeRanks({2, 3}), "ranks 2 and 3");
  EXPECT_EQ(detail::DescribeRanks({0, 2, 3, 4, 5, 7}), "ranks 0, 2-5 and 7");
  EXPECT_EQ(detail::DescribeRanks({1, 2, 3}), "ranks 1-3");
  EXPECT_EQ(detail::DescribeRanks({0, 1, 5, 6}), "ranks 0, 1, 5 and 6");
}

}  // namespace
}  // namespace ring::trial
