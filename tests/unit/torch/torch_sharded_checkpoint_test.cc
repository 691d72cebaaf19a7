// Sharded torch checkpoints: two ranks (threads of this test, meeting
// through an in-memory store) each save their own module and optimizer as
// their part of one checkpoint, and each gets exactly its own state back;
// a rank of a trial with another world size is refused.
#include <gtest/gtest.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/sgd.h>
#include <torch/types.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "ring/trial/kv_store.h"
#include "ring/trial/torch.h"

namespace ring::trial {
namespace {

namespace fs = std::filesystem;

class TorchShardedCheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("torch-sharded-test-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  Context LocalContext(int rank, int world, const std::string& resume) {
    std::vector<std::string> args = {"trial", "--checkpoint-dir", (dir_ / "checkpoints").string()};
    if (!resume.empty()) args.insert(args.end(), {"--resume", resume});
    std::vector<const char*> argv;
    for (const auto& a : args) argv.push_back(a.c_str());
    thread_local std::ostringstream quiet;  // one per rank's thread
    ContextOptions options;
    options.local_out = &quiet;
    options.diagnostics = &quiet;
    return Context::from_environment(static_cast<int>(argv.size()), argv.data(),
                                     {{"RANK", std::to_string(rank)}, {"WORLD_SIZE", std::to_string(world)}},
                                     std::move(options));
  }

  // Runs fn(rank) on `world` threads; failures are reported per rank.
  static void OnRanks(int world, const std::function<void(int)>& fn) {
    std::vector<std::thread> threads;
    std::mutex mu;
    std::vector<std::string> failures;
    for (int r = 0; r < world; ++r)
      threads.emplace_back([&, r] {
        try {
          fn(r);
        } catch (const std::exception& e) {
          std::lock_guard lock(mu);
          failures.push_back("rank " + std::to_string(r) + ": " + e.what());
        }
      });
    for (auto& t : threads) t.join();
    for (const auto& f : failures) ADD_FAILURE() << f;
  }

  fs::path dir_;
};

TEST_F(TorchShardedCheckpointTest, EveryRankGetsItsOwnPartBack) {
  auto store = InMemoryStore();
  std::vector<torch::Tensor> saved(2);
  std::string uuids[2];
  OnRanks(2, [&](int r) {
    Context ctx = LocalContext(r, 2, "");
    torch::manual_seed(r + 1);  // each rank holds a different part of the model
    torch::nn::Linear part(4, 3 + r);
    torch::optim::SGD opt(part->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
    part->forward(torch::ones({2, 4})).sum().backward();
    opt.step();
    saved[r] = torch::cat({part->weight.detach().flatten(), part->bias.detach().flatten()}).clone();
    ShardedCheckpoints sharded(ctx.checkpoints(), r, 2, store);
    uuids[r] = SaveShardedTorchCheckpoint(sharded, 5, *part, &opt, {{"note", "x"}});
  });
  ASSERT_FALSE(uuids[0].empty());
  ASSERT_EQ(uuids[0], uuids[1]);
  const fs::path checkpoint = dir_ / "checkpoints" / uuids[0];
  for (int r = 0; r < 2; ++r) {
    EXPECT_TRUE(fs::exists(checkpoint / ("rank-" + std::to_string(r)) / kTorchModelFile));
    EXPECT_TRUE(fs::exists(checkpoint / ("rank-" + std::to_string(r)) / kTorchOptimizerFile));
  }

  std::vector<torch::Tensor> restored(2);
  OnRanks(2, [&](int r) {
    Context ctx = LocalContext(r, 2, checkpoint.string());
    torch::nn::Linear part(4, 3 + r);
    torch::optim::SGD opt(part->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
    ShardedCheckpoints sharded(ctx.checkpoints(), r, 2, InMemoryStore());
    auto info = RestoreShardedTorchCheckpoint(sharded, *part, &opt);
    ASSERT_TRUE(info.has_value());
    EXPECT_EQ(info->batches, 5);
    EXPECT_EQ(info->metadata["note"], "x");
    restored[r] = torch::cat({part->weight.detach().flatten(), part->bias.detach().flatten()});
  });
  for (int r = 0; r < 2; ++r) {
    ASSERT_TRUE(restored[r].defined());
    EXPECT_TRUE(torch::equal(restored[r], saved[r])) << "rank " << r;
  }

  // One rank alone has no part of its own.
  Context alone = LocalContext(0, 1, checkpoint.string());
  ShardedCheckpoints sharded(alone.checkpoints(), 0, 1, InMemoryStore());
  torch::nn::Linear part(4, 3);
  try {
    RestoreShardedTorchCheckpoint(sharded, *part, nullptr);
    ADD_FAILURE() << "a checkpoint of two parts restored on one rank";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("holds the parts of 2 ranks and this trial runs 1"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace ring::trial
