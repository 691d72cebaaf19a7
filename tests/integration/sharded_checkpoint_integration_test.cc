// Sharded checkpoints against a real master and agents: a two-rank
// experiment whose processes only record their environment and sleep gives
// a real allocation; this test's threads act as its ranks, meet through the
// master's key-value store, write their parts of one checkpoint into the
// real checkpoint storage, which the master registers once (both parts,
// "ring_shards": 2), and each rank restores its own part from it.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>

#include "common/archive.h"
#include "ring/trial/checkpoints_sharded.h"
#include "ring/trial/context.h"
#include "tests/support/test_cluster.h"

namespace ring::testing::sharded_checkpoints {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

const char* kRunScript = R"(#!/bin/sh
out="$OUT_DIR/env-$RANK"
env > "$out.tmp" && mv "$out.tmp" "$out.txt"
exec sleep 120
)";

std::string ReadText(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(ShardedCheckpointIntegrationTest, TwoRanksWriteOneCheckpointTheMasterRegistersOnce) {
  TestCluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("node-a", 1);
  cluster.StartAgent("node-b", 1);
  const std::string out = cluster.dir() + "/out";
  fs::create_directories(out);
  auto model = PackDirectory(cluster.MakeModelDir("model", {{"run.sh", kRunScript}}));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const std::string config =
      "name: pair\nentrypoint: sh run.sh\nsearcher:\n  name: single\n  metric: loss\n  max_length:\n"
      "    batches: 10\nresources:\n  slots_per_trial: 2\nmax_restarts: 0\nenvironment:\n  variables:\n"
      "    OUT_DIR: " +
      out + "\n";
  int status = 0;
  auto created = cluster.PostJson("/api/v1/experiments",
                                  {{"config", config}, {"model_definition", Base64Encode(*model)}}, &status);
  ASSERT_EQ(status, 201) << created.dump();
  trial::Environment env[2];
  for (int rank = 0; rank < 2; ++rank) {
    const std::string path = out + "/env-" + std::to_string(rank) + ".txt";
    ASSERT_TRUE(TestCluster::WaitFor([&] { return fs::exists(path); }, 30s)) << path << " never written";
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) {
      const auto eq = line.find('=');
      if (eq != std::string::npos) env[rank][line.substr(0, eq)] = line.substr(eq + 1);
    }
  }

  // Each rank writes its own part; every rank gets the one uuid.
  auto part_of = [](int rank) { return "part of rank " + std::to_string(rank); };
  std::string uuids[2];
  fs::path dirs[2];
  std::vector<std::future<void>> ranks;
  for (int rank = 0; rank < 2; ++rank)
    ranks.push_back(std::async(std::launch::async, [&, rank] {
      std::ostringstream quiet;
      trial::ContextOptions options;
      options.local_out = &quiet;
      options.diagnostics = &quiet;
      const char* argv[] = {"trial"};
      auto ctx = trial::Context::from_environment(1, argv, env[rank], std::move(options));
      trial::ShardedCheckpoints sharded(ctx, {.timeout = 60s});
      uuids[rank] = sharded.save(7, [&](const fs::path& dir) {
        dirs[rank] = dir;
        std::ofstream(dir / "part.txt") << part_of(rank);
      });
    }));
  for (auto& r : ranks) r.get();
  ASSERT_FALSE(uuids[0].empty());
  EXPECT_EQ(uuids[0], uuids[1]);

  auto record = cluster.GetJson("/api/v1/checkpoints/" + uuids[0], &status);
  ASSERT_EQ(status, 200) << record.dump();
  EXPECT_EQ(record["metadata"]["ring_shards"], 2) << record.dump();
  ASSERT_EQ(record["resources"].size(), 2u) << record.dump();
  EXPECT_EQ(record["resources"][0]["path"], "rank-0/part.txt");
  EXPECT_EQ(record["resources"][1]["path"], "rank-1/part.txt");

  // Each rank restores its own part from the registered folder.
  const fs::path checkpoint = dirs[0].parent_path().parent_path() / uuids[0];
  ASSERT_TRUE(fs::exists(checkpoint / "rank-1" / "part.txt")) << checkpoint;
  for (int rank = 0; rank < 2; ++rank) {
    env[rank]["RING_LATEST_CHECKPOINT"] = checkpoint.string();
    std::ostringstream quiet;
    trial::ContextOptions options;
    options.local_out = &quiet;
    options.diagnostics = &quiet;
    const char* argv[] = {"trial"};
    auto ctx = trial::Context::from_environment(1, argv, env[rank], std::move(options));
    trial::ShardedCheckpoints sharded(ctx);
    auto mine = sharded.latest_verified();
    ASSERT_TRUE(mine.has_value());
    EXPECT_EQ(mine->batches, 7);
    EXPECT_EQ(ReadText(mine->path / "part.txt"), part_of(rank));
  }
}

}  // namespace
}  // namespace ring::testing::sharded_checkpoints
