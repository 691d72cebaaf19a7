// DistributedModule's cross-step overlap over real groups of ranks as
// threads: parameters after several overlapped steps are bit for bit those
// of the synchronous step (2 and 4 ranks over Gloo, whose ring would add in
// an order that depends on the cut; 4 ranks through shared memory on one
// agent and hierarchically on two), layers unused in a step count as
// zero, and optimizers or steps that need every gradient take the
// synchronous step and say why.
#include <gtest/gtest.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <functional>
#include <string>
#include <vector>

#include "ring/trial/kv_store.h"
#include "ring/trial/torch.h"
#include "tests/unit/distributed/distributed_thread_ranks.h"

namespace ring::trial {
namespace {

using namespace std::chrono_literals;

struct NetImpl : torch::nn::Module {
  NetImpl() {
    a = register_module("a", torch::nn::Linear(12, 48));
    b = register_module("b", torch::nn::Linear(48, 40));
    c = register_module("c", torch::nn::Linear(40, 5));
    side = register_module("side", torch::nn::Linear(12, 5));
  }
  torch::Tensor forward(const torch::Tensor& x, bool use_side) {
    torch::Tensor y = c->forward(torch::relu(b->forward(torch::tanh(a->forward(x)))));
    return use_side ? y + side->forward(x) : y;
  }
  torch::nn::Linear a{nullptr}, b{nullptr}, c{nullptr}, side{nullptr};
};
TORCH_MODULE(Net);

enum class Optim { kSgd, kAdam };

OptimizerFactory Factory(Optim which) {
  return [which](std::vector<torch::Tensor> params) -> std::unique_ptr<torch::optim::Optimizer> {
    if (which == Optim::kAdam)
      return std::make_unique<torch::optim::Adam>(params, torch::optim::AdamOptions(0.01));
    return std::make_unique<torch::optim::SGD>(
        params, torch::optim::SGDOptions(0.05).momentum(0.9).weight_decay(1e-3));
  };
}

// Trains `steps` steps on this rank's own data and returns the parameters.
std::vector<torch::Tensor> Train(ProcessGroup& group, StepOverlap overlap, Optim optim, int steps,
                                 bool* overlapped = nullptr) {
  // Different initial weights on every rank (the root's must win), drawn
  // from a generator of this rank's own: the default one is shared by the
  // ranks' threads.
  Net net;
  torch::Generator init = torch::make_generator<torch::CPUGeneratorImpl>(100 + group.rank());
  {
    torch::NoGradGuard no_grad;
    for (auto& p : net->parameters()) p.copy_(torch::randn(p.sizes(), init) * 0.3);
  }
  DistributedModuleOptions options;
  options.overlap = overlap;
  options.piece_bytes = 1024;  // many pieces: large layers split, small ones grouped
  options.reducer.timeout = 60s;
  DistributedModule ddp(group, *net, options);
  ddp.set_optimizer(Factory(optim));
  if (overlapped) *overlapped = ddp.cross_step();
  torch::Generator data = torch::make_generator<torch::CPUGeneratorImpl>(7 + group.rank());
  for (int step = 0; step < steps; ++step) {
    torch::Tensor x = torch::randn({6, 12}, data);
    torch::Tensor y = torch::randint(0, 5, {6}, data, torch::kInt64);
    // The side layer sits out every third step (on every rank).
    torch::Tensor loss = torch::nn::functional::cross_entropy(net->forward(x, step % 3 != 2), y);
    loss.backward();
    ddp.step();
  }
  ddp.finish();
  std::vector<torch::Tensor> out;
  for (const auto& p : net->parameters()) out.push_back(p.detach().clone());
  return out;
}

struct Layout {
  std::string name;
  std::vector<std::string> agents;  // one per rank
  std::string backend;
};

class CrossStepTest : public ::testing::TestWithParam<Layout> {};

TEST_P(CrossStepTest, ParametersAreBitIdenticalToTheSynchronousStep) {
  const Layout& layout = GetParam();
  const int world = static_cast<int>(layout.agents.size());
  auto store = InMemoryStore();
  testing::RunThreads(world, [&](int r) {
    torch::set_num_threads(1);
    auto group = ConnectProcessGroup(testing::RankOnAgents(r, layout.agents), store,
                                     {.backend = layout.backend, .rendezvous_timeout = 30s});
    for (Optim optim : {Optim::kSgd, Optim::kAdam}) {
      SCOPED_TRACE(optim == Optim::kSgd ? "SGD" : "Adam");
      bool overlapped = false, synchronous = true;
      const auto plain = Train(*group, StepOverlap::kSynchronous, optim, 7, &synchronous);
      const auto crossed = Train(*group, StepOverlap::kCrossStep, optim, 7, &overlapped);
      EXPECT_FALSE(synchronous);
      EXPECT_TRUE(overlapped);
      ASSERT_EQ(plain.size(), crossed.size());
      for (size_t i = 0; i < plain.size(); ++i)
        EXPECT_TRUE(torch::equal(plain[i], crossed[i]))
            << "parameter " << i << " differs by up to " << (plain[i] - crossed[i]).abs().max().item<float>();
      // Training moved the weights away from the root's start.
      torch::Generator root = torch::make_generator<torch::CPUGeneratorImpl>(100);
      const torch::Tensor start = torch::randn(crossed[0].sizes(), root) * 0.3;
      EXPECT_FALSE(torch::equal(start, crossed[0]));
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Layouts, CrossStepTest,
                         ::testing::Values(Layout{"TwoRanksGloo", {"h0", "h1"}, "gloo"},
                                           Layout{"FourRanksGloo", {"h0", "h1", "h2", "h3"}, "gloo"},
                                           Layout{"FourRanksOneAgent", {"h0", "h0", "h0", "h0"}, "auto"},
                                           Layout{"FourRanksTwoAgents", {"h0", "h0", "h1", "h1"}, "auto"}),
                         [](const ::testing::TestParamInfo<Layout>& info) { return info.param.name; });

TEST(CrossStepFallbackTest, StepsThatNeedEveryGradientAreSynchronousAndSayWhy) {
  testing::RunGroup(2, {.backend = "gloo", .rendezvous_timeout = 30s}, [&](ProcessGroup& group) {
    torch::set_num_threads(1);
    Net net;
    {
      DistributedModule ddp(group, *net, {.overlap = StepOverlap::kCrossStep, .piece_bytes = 1024});
      ddp.set_optimizer([](std::vector<torch::Tensor> params) {
        return std::make_unique<torch::optim::LBFGS>(params, torch::optim::LBFGSOptions(0.1));
      });
      EXPECT_FALSE(ddp.cross_step());
      EXPECT_NE(ddp.step_mode().find("optimizer"), std::string::npos) << ddp.step_mode();
    }
    {
      DistributedModule ddp(
          group, *net,
          {.overlap = StepOverlap::kCrossStep, .piece_bytes = 1024, .needs_all_gradients = true});
      ddp.set_optimizer(Factory(Optim::kSgd));
      EXPECT_FALSE(ddp.cross_step());
      EXPECT_NE(ddp.step_mode().find("every gradient"), std::string::npos) << ddp.step_mode();
    }
    {
      DistributedModule ddp(group, *net);  // kAuto, 1 MiB pieces: the net fits in one
      ddp.set_optimizer(Factory(Optim::kSgd));
      EXPECT_FALSE(ddp.cross_step());
      EXPECT_NE(ddp.step_mode().find("one piece"), std::string::npos) << ddp.step_mode();
      EXPECT_THROW(ddp.set_optimizer(Factory(Optim::kSgd)), ReducerUsageError);
    }
    {
      DistributedModule ddp(group, *net);
      EXPECT_THROW(ddp.step(), ConfigError);
    }
  });
}

}  // namespace
}  // namespace ring::trial
