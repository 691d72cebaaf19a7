// ringtrial_torch over a real Gloo group of two ranks (threads of this test,
// meeting through an in-memory store on loopback): DistributedModule starts
// every rank from rank 0's weights, averages gradients exactly as one process
// training on the whole batch would, counts unused parameters as zero and
// refuses ranks with different models; the torch state travels between ranks
// and through checkpoints, and bad checkpoints are named.
#include <gtest/gtest.h>
#include <torch/nn/functional/loss.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/sgd.h>
#include <torch/types.h>
#include <torch/utils.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "ring/trial/kv_store.h"
#include "ring/trial/torch.h"

namespace ring::trial {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// A small MLP; `unused` adds a layer that only takes part when asked.
struct MlpImpl : torch::nn::Module {
  explicit MlpImpl(int64_t hidden = 8) {
    a = register_module("a", torch::nn::Linear(4, hidden));
    b = register_module("b", torch::nn::Linear(hidden, 3));
    side = register_module("side", torch::nn::Linear(4, 3));
  }
  torch::Tensor forward(const torch::Tensor& x, bool use_side = true) {
    torch::Tensor y = b->forward(torch::tanh(a->forward(x)));
    return use_side ? y + side->forward(x) : y;
  }
  torch::nn::Linear a{nullptr}, b{nullptr}, side{nullptr};
};
TORCH_MODULE(Mlp);

// Runs fn(rank, group) on two threads, each with its own Gloo group.
void RunTwoRanks(const std::function<void(int, ProcessGroup&)>& fn) {
  auto store = InMemoryStore();
  std::vector<std::thread> threads;
  std::mutex mu;
  std::vector<std::string> failures;
  for (int r = 0; r < 2; ++r)
    threads.emplace_back([&, r] {
      try {
        RankInfo self{.rank = r,
                      .world_size = 2,
                      .local_rank = 0,
                      .local_world_size = 1,
                      .agent_id = "agent-" + std::to_string(r),
                      .address = "127.0.0.1"};
        ProcessGroupOptions options;
        options.backend = "gloo";
        options.rendezvous_timeout = 30s;
        auto group = ConnectProcessGroup(self, store, options);
        fn(r, *group);
      } catch (const std::exception& e) {
        std::lock_guard lock(mu);
        failures.push_back("rank " + std::to_string(r) + ": " + e.what());
      }
    });
  for (auto& t : threads) t.join();
  for (const auto& f : failures) ADD_FAILURE() << f;
}

torch::Tensor Flat(const torch::nn::Module& m, bool grads) {
  std::vector<torch::Tensor> parts;
  for (const auto& p : m.parameters()) parts.push_back((grads ? p.grad() : p).detach().flatten().clone());
  return torch::cat(parts);
}

class TorchDistributedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    torch::set_num_threads(1);
    torch::manual_seed(42);
    inputs_ = torch::randn({16, 4});
    targets_ = torch::randint(0, 3, {16}, torch::kInt64);
    // Different initial weights on each rank; rank 0's must win.
    for (int r = 0; r < 2; ++r) nets_.push_back(Mlp());
    reference_ = Mlp();
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < reference_->parameters().size(); ++i)
      reference_->parameters()[i].copy_(nets_[0]->parameters()[i]);
  }

  // This rank's half of the batch.
  torch::Tensor Half(const torch::Tensor& t, int rank) const { return t.narrow(0, rank * 8, 8); }

  torch::Tensor inputs_, targets_;
  std::vector<Mlp> nets_;
  Mlp reference_{nullptr};
};

TEST_F(TorchDistributedTest, TrainsLikeOneProcessOnTheWholeBatch) {
  ASSERT_FALSE(torch::equal(Flat(*nets_[0], false), Flat(*nets_[1], false)));
  // The reference: one process, the whole batch, plain SGD with momentum.
  torch::optim::SGD ref_opt(reference_->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
  for (int step = 0; step < 5; ++step) {
    ref_opt.zero_grad();
    torch::nn::functional::cross_entropy(reference_->forward(inputs_), targets_).backward();
    ref_opt.step();
  }
  std::vector<torch::Tensor> finals(2), first_grads(2);
  RunTwoRanks([&](int r, ProcessGroup& group) {
    Mlp& net = nets_[r];
    torch::optim::SGD opt(net->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
    DistributedModule ddp(group, *net, {.reducer = {.bucket_bytes = 64}});  // several buckets
    EXPECT_EQ(ddp.parameter_count(), 6u);
    EXPECT_GT(ddp.buckets().size(), 1u);
    for (int step = 0; step < 5; ++step) {
      opt.zero_grad();
      torch::nn::functional::cross_entropy(net->forward(Half(inputs_, r)), Half(targets_, r)).backward();
      ddp.synchronize();
      if (step == 0) first_grads[r] = Flat(*net, true);
      opt.step();
    }
    finals[r] = Flat(*net, false);
    EXPECT_EQ(ddp.totals().iterations, 5u);
  });
  ASSERT_TRUE(finals[0].defined() && finals[1].defined());
  EXPECT_TRUE(torch::equal(first_grads[0], first_grads[1])) << "the ranks got different averages";
  EXPECT_TRUE(torch::equal(finals[0], finals[1])) << "the ranks' parameters diverged";
  EXPECT_TRUE(torch::allclose(finals[0], Flat(*reference_, false), 1e-5, 1e-6))
      << (finals[0] - Flat(*reference_, false)).abs().max();
}

TEST_F(TorchDistributedTest, ParametersWithoutGradientCountAsZero) {
  // Rank 0 uses the side layer, rank 1 does not: its gradient there is rank 0's halved.
  std::vector<torch::Tensor> side_grads(2);
  torch::Tensor rank0_side;
  RunTwoRanks([&](int r, ProcessGroup& group) {
    Mlp& net = nets_[r];
    DistributedModule ddp(group, *net);
    torch::Tensor loss =
        torch::nn::functional::cross_entropy(net->forward(Half(inputs_, r), r == 0), Half(targets_, r));
    loss.backward();
    if (r == 0) rank0_side = net->side->weight.grad().clone();
    ddp.synchronize();
    side_grads[r] = net->side->weight.grad().clone();
  });
  ASSERT_TRUE(side_grads[0].defined() && side_grads[1].defined() && rank0_side.defined());
  EXPECT_TRUE(torch::equal(side_grads[0], side_grads[1]));
  EXPECT_TRUE(torch::allclose(side_grads[0], rank0_side / 2));
}

TEST_F(TorchDistributedTest, RanksWithDifferentModelsAreRefusedOnEveryRank) {
  std::vector<std::string> errors(2);
  RunTwoRanks([&](int r, ProcessGroup& group) {
    Mlp net(r == 0 ? 8 : 9);
    try {
      DistributedModule ddp(group, *net);
    } catch (const ConfigError& e) {
      errors[r] = e.what();
    }
  });
  EXPECT_NE(errors[1].find("rank 1 has 6 trainable parameters with 90 elements, rank 0 has 6 with 82"),
            std::string::npos)
      << errors[1];
  EXPECT_NE(errors[0].find("1 rank(s) built a model whose parameters differ from rank 0's"),
            std::string::npos)
      << errors[0];
}

TEST_F(TorchDistributedTest, BroadcastTorchStateSendsModuleAndOptimizer) {
  std::vector<torch::Tensor> after(2);
  RunTwoRanks([&](int r, ProcessGroup& group) {
    Mlp& net = nets_[r];
    torch::optim::SGD opt(net->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
    if (r == 0) {  // rank 0 alone builds up momentum
      for (int step = 0; step < 3; ++step) {
        opt.zero_grad();
        torch::nn::functional::cross_entropy(net->forward(inputs_), targets_).backward();
        opt.step();
      }
    }
    BroadcastTorchState(group, *net, &opt);
    // The same step on both: equal only when the momentum buffers came along too.
    opt.zero_grad();
    torch::nn::functional::cross_entropy(net->forward(inputs_), targets_).backward();
    opt.step();
    after[r] = Flat(*net, false);
  });
  ASSERT_TRUE(after[0].defined() && after[1].defined());
  EXPECT_TRUE(torch::equal(after[0], after[1]));
}

class TorchCheckpointTest : public TorchDistributedTest {
 protected:
  void SetUp() override {
    TorchDistributedTest::SetUp();
    dir_ = fs::temp_directory_path() / ("torch-checkpoint-test-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A local-mode context of rank `rank` of 2, resuming from `resume` when given.
  Context LocalContext(int rank, const std::string& resume) {
    std::vector<std::string> args = {"trial", "--checkpoint-dir", (dir_ / "checkpoints").string()};
    if (!resume.empty()) args.insert(args.end(), {"--resume", resume});
    std::vector<const char*> argv;
    for (const auto& a : args) argv.push_back(a.c_str());
    static std::ostringstream quiet;
    ContextOptions options;
    options.local_out = &quiet;
    options.diagnostics = &quiet;
    return Context::from_environment(static_cast<int>(argv.size()), argv.data(),
                                     {{"RANK", std::to_string(rank)}, {"WORLD_SIZE", "2"}},
                                     std::move(options));
  }

  fs::path dir_;
};

TEST_F(TorchCheckpointTest, ChiefSavesAndEveryRankResumesWithTheChiefsState) {
  // Rank 0 trains a little and saves; rank 1 writes nothing.
  std::string uuid;
  {
    torch::optim::SGD opt(nets_[0]->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
    opt.zero_grad();
    torch::nn::functional::cross_entropy(nets_[0]->forward(inputs_), targets_).backward();
    opt.step();
    Context chief = LocalContext(0, "");
    uuid = SaveTorchCheckpoint(chief, 7, *nets_[0], &opt, {{"note", "x"}});
    Context other = LocalContext(1, "");
    EXPECT_EQ(SaveTorchCheckpoint(other, 7, *nets_[1], nullptr), "");
  }
  ASSERT_FALSE(uuid.empty());
  const fs::path checkpoint = dir_ / "checkpoints" / uuid;
  EXPECT_TRUE(fs::exists(checkpoint / kTorchModelFile));
  EXPECT_TRUE(fs::exists(checkpoint / kTorchOptimizerFile));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_ / "checkpoints"), fs::directory_iterator()), 1);
  const torch::Tensor saved = Flat(*nets_[0], false);

  std::vector<torch::Tensor> restored(2);
  RunTwoRanks([&](int r, ProcessGroup& group) {
    Context ctx = LocalContext(r, checkpoint.string());
    Mlp net;
    torch::optim::SGD opt(net->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
    auto info = RestoreTorchCheckpoint(ctx, group, *net, &opt);
    ASSERT_TRUE(info.has_value());
    EXPECT_EQ(info->batches, 7);
    EXPECT_EQ(info->metadata["note"], "x");
    restored[r] = Flat(*net, false);
  });
  ASSERT_TRUE(restored[0].defined() && restored[1].defined());
  EXPECT_TRUE(torch::equal(restored[0], saved));
  EXPECT_TRUE(torch::equal(restored[1], saved));

  // Starting afresh: nothing on either rank.
  RunTwoRanks([&](int r, ProcessGroup& group) {
    Context ctx = LocalContext(r, "");
    EXPECT_FALSE(RestoreTorchCheckpoint(ctx, group, *nets_[r], nullptr).has_value());
  });
}

TEST_F(TorchCheckpointTest, CorruptedOrForeignCheckpointsAreNamedOnEveryRank) {
  std::string uuid;
  {
    Context chief = LocalContext(0, "");
    uuid = SaveTorchCheckpoint(chief, 3, *nets_[0], nullptr);
  }
  const fs::path checkpoint = dir_ / "checkpoints" / uuid;
  {
    std::fstream f(checkpoint / kTorchModelFile, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100);
    f.put('\x7f');
  }
  std::vector<std::string> errors(2);
  RunTwoRanks([&](int r, ProcessGroup& group) {
    Context ctx = LocalContext(r, checkpoint.string());
    try {
      RestoreTorchCheckpoint(ctx, group, *nets_[r], nullptr);
    } catch (const CheckpointError& e) {
      errors[r] = e.what();
    }
  });
  EXPECT_NE(errors[0].find("file model.pt is corrupted"), std::string::npos) << errors[0];
  EXPECT_NE(errors[1].find("rank 0 could not restore checkpoint " + uuid), std::string::npos) << errors[1];

  // A model of another shape: the parameter is named.
  WriteTorchState(dir_, *nets_[0], nullptr);
  Mlp wider(9);
  try {
    ReadTorchState(dir_, *wider, nullptr);
    ADD_FAILURE() << "a state of another shape loaded";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("a.weight has shape [8, 4], this model's is [9, 4]"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(ReadTorchState(dir_ / "missing", *wider, nullptr), CheckpointError);
}

}  // namespace
}  // namespace ring::trial
