// The trial runtime's MasterStore and a Gloo group against a real master and
// real agents: a two-rank experiment whose processes only record their
// environment and sleep gives a real allocation, its token and each rank's
// RING_AGENT_ID / RING_AGENT_ADDR; this test's threads then act as those ranks.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <thread>

#include "common/archive.h"
#include "ring/trial/context.h"
#include "ring/trial/distributed.h"
#include "ring/trial/errors.h"
#include "ring/trial/kv_store.h"
#include "tests/support/test_cluster.h"

namespace ring::testing::distributed_store {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using trial::KeyValueStore;

const char* kRunScript = R"(#!/bin/sh
out="$OUT_DIR/env-$RANK"
env > "$out.tmp" && mv "$out.tmp" "$out.txt"
exec sleep 120
)";

KeyValueStore::Bytes B(const std::string& s) {
  return KeyValueStore::Bytes(s.begin(), s.end());
}

class DistributedMasterStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_.StartMaster();
    cluster_.StartAgent("node-a", 1);
    cluster_.StartAgent("node-b", 1);
    const std::string out = cluster_.dir() + "/out";
    fs::create_directories(out);
    auto model = PackDirectory(cluster_.MakeModelDir("model", {{"run.sh", kRunScript}}));
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    const std::string config =
        "name: pair\nentrypoint: sh run.sh\nsearcher:\n  name: single\n  metric: loss\n  max_length:\n"
        "    batches: 10\nresources:\n  slots_per_trial: 2\nmax_restarts: 0\nenvironment:\n  variables:\n"
        "    OUT_DIR: " +
        out + "\n";
    int status = 0;
    auto created = cluster_.PostJson(
        "/api/v1/experiments", {{"config", config}, {"model_definition", Base64Encode(*model)}}, &status);
    ASSERT_EQ(status, 201) << created.dump();
    for (int rank = 0; rank < 2; ++rank) {
      const std::string path = out + "/env-" + std::to_string(rank) + ".txt";
      ASSERT_TRUE(TestCluster::WaitFor([&] { return fs::exists(path); }, 30s)) << path << " never written";
      std::ifstream in(path);
      for (std::string line; std::getline(in, line);) {
        const auto eq = line.find('=');
        if (eq != std::string::npos) env_[rank][line.substr(0, eq)] = line.substr(eq + 1);
      }
    }
    allocation_ = env_[0]["RING_ALLOCATION_ID"];
    token_ = env_[0]["RING_ALLOCATION_TOKEN"];
    ASSERT_FALSE(allocation_.empty());
    ASSERT_FALSE(token_.empty());
  }

  std::shared_ptr<KeyValueStore> Store(const std::string& token) {
    return trial::MasterStore(cluster_.url(), allocation_, token);
  }

  TestCluster cluster_;
  trial::Environment env_[2];
  std::string allocation_, token_;
};

TEST_F(DistributedMasterStoreTest, SetGetAndWaitBetweenThreads) {
  auto writer = Store(token_);
  auto reader = Store(token_);
  auto waiting = std::async(std::launch::async, [&] {
    const auto t0 = std::chrono::steady_clock::now();
    auto value = reader->get("rank/1", 20s);
    return std::make_pair(value, std::chrono::steady_clock::now() - t0);
  });
  std::this_thread::sleep_for(500ms);
  writer->set("rank/1", B("127.0.0.1:4242"));
  auto [value, waited] = waiting.get();
  EXPECT_EQ(value, B("127.0.0.1:4242"));
  EXPECT_GE(waited, 400ms);
  EXPECT_LT(waited, 5s);  // answered when set, not at the end of the wait

  // The largest value, binary, round-trips; replacing keeps the last one.
  KeyValueStore::Bytes big(4u << 20);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<uint8_t>(i * 131 % 251);
  writer->set("blob", big);
  EXPECT_EQ(reader->get("blob", 0ms), big);
  writer->set("blob", B("small"));
  EXPECT_EQ(reader->get("blob", 0ms), B("small"));
  EXPECT_TRUE(reader->check({"rank/1", "blob"}));
  EXPECT_FALSE(reader->check({"rank/1", "rank/2"}));

  // Not set within the wait: an error naming the key, after the wait.
  const auto t0 = std::chrono::steady_clock::now();
  try {
    reader->get("rank/2", 700ms);
    FAIL() << "read a key nobody set";
  } catch (const trial::RendezvousError& e) {
    EXPECT_NE(std::string(e.what()).find("rendezvous key rank/2 was not set within 700 ms"),
              std::string::npos)
        << e.what();
  }
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 650ms);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);

  // Checked before sending: bad keys and values never reach the master.
  EXPECT_THROW(writer->set("bad key", B("v")), trial::RendezvousError);
  EXPECT_THROW(writer->set("huge", KeyValueStore::Bytes((4u << 20) + 1)), trial::RendezvousError);
  // Another token is refused like any trial API call with it.
  EXPECT_THROW(Store("not-the-token")->set("k", B("v")), trial::AllocationEndedError);
}

TEST_F(DistributedMasterStoreTest, AWaitingReadEndsWhenTheAllocationEnds) {
  auto reader = Store(token_);
  auto waiting = std::async(std::launch::async, [&] {
    const auto t0 = std::chrono::steady_clock::now();
    try {
      reader->get("never", 50s);  // two waiting reads of at most 30 s each
      ADD_FAILURE() << "read a key nobody set";
    } catch (const trial::AllocationEndedError& e) {
      EXPECT_NE(std::string(e.what()).find("reading rendezvous key never"), std::string::npos) << e.what();
    }
    return std::chrono::steady_clock::now() - t0;
  });
  std::this_thread::sleep_for(500ms);
  int status = 0;
  cluster_.PostJson("/api/v1/experiments/1/kill", {}, &status);
  ASSERT_EQ(status, 200);
  EXPECT_LT(waiting.get(), 20s);
}

TEST_F(DistributedMasterStoreTest, TwoRanksAllreduceOverGlooAfterMeetingThroughTheMaster) {
  std::vector<std::string> backends(2);
  std::vector<std::future<void>> ranks;
  for (int rank = 0; rank < 2; ++rank)
    ranks.push_back(std::async(std::launch::async, [&, rank] {
      std::ostringstream quiet;
      trial::ContextOptions options;
      options.local_out = &quiet;
      options.diagnostics = &quiet;
      const char* argv[] = {"trial"};
      auto ctx = trial::Context::from_environment(1, argv, env_[rank], std::move(options));
      EXPECT_EQ(ctx.rank(), rank);
      EXPECT_EQ(ctx.agent_id(), rank == 0 ? "node-a" : "node-b");
      EXPECT_EQ(ctx.agent_address(), "127.0.0.1");
      trial::ProcessGroupOptions group_options;
      group_options.rendezvous_timeout = 30s;
      auto group = trial::ConnectProcessGroup(ctx, group_options);
      backends[static_cast<size_t>(rank)] = group->backend();
      std::vector<float> data(1 << 20);
      for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>((rank + 1) * (i % 100));
      group->allreduce(std::span<float>(data), trial::ReduceOp::kSum, 30s);
      for (size_t i = 0; i < data.size(); ++i) ASSERT_EQ(data[i], static_cast<float>(3 * (i % 100))) << i;
      group->barrier(30s);
    }));
  for (auto& r : ranks) r.get();
  EXPECT_EQ(backends, (std::vector<std::string>{"gloo", "gloo"}));
  // Both ranks' records, their Gloo addresses and rank 0's verdict that
  // every pair greeted went through the master.
  EXPECT_TRUE(Store(token_)->check({"default/rank/0", "default/rank/1", "default/gloo/0/addresses/0",
                                    "default/gloo/0/addresses/1", "default/gloo/0/greeted"}));
}

}  // namespace
}  // namespace ring::testing::distributed_store
