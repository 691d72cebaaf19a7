// train_step_bench: one rank of data-parallel training steps (forward,
// backward with the gradients averaged over the ranks while it runs, SGD
// step) through the runtime's DistributedModule over Gloo, the Ringmaster
// half of bench/training_step.sh. torch_train_step.py is the same with
// PyTorch's DistributedDataParallel.
//
//   train_step_bench --model cnn|mlp --rank R --world W --store DIR --address ADDR [--steps N]
//                    [--overlap sync|cross|auto] [--node K --local-rank L --local-world M]
//                    [--backend gloo|auto] [--compress none|fp16|bf16] [--digits N] [--piece-kib K]
//
//   cnn  the digits example's CNN (about 9,000 parameters), 32 images of 8x8
//        per rank and step
//   --digits N  instead of timing steps, train the CNN for N steps on the
//        digits data (each rank its share of the first 1,500 records, 32 a
//        step; SGD 0.05, momentum 0.9) and print rank 0's accuracy on the
//        other 297: `accuracy cnn ringmaster-MODE ACCURACY`
//
//   mlp  a synthetic MLP 1024-2048-2048-10 (6.3 M parameters, 25 MiB of
//        gradients), 64 records per rank and step
//
// Ranks meet through a file store in DIR (a directory every rank sees) and
// connect from ADDR, an address of this rank's host (node K, as local rank L
// of M there). --overlap: sync averages every gradient before the optimizer
// steps; cross overlaps steps (DistributedModule::set_optimizer); auto lets
// the module choose. Rank 0 prints `step MODEL ringmaster-MODE MEDIAN_MS
// MEAN_MS WAIT_MS REDUCE_MS` over the steps after 5 warm-ups (WAIT_MS: the
// training thread waiting for averages; REDUCE_MS: the allreduces, hidden
// behind computation or not), MODE the mode the module took.
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <string>
#include <vector>

#include "digits_data.h"
#include "digits_net.h"
#include "ring/trial/distributed.h"
#include "ring/trial/kv_store.h"
#include "ring/trial/torch/distributed_module.h"

namespace {

using namespace std::chrono_literals;

struct Mlp : torch::nn::Module {
  torch::nn::Linear fc1{nullptr}, fc2{nullptr}, fc3{nullptr};
  Mlp() {
    fc1 = register_module("fc1", torch::nn::Linear(1024, 2048));
    fc2 = register_module("fc2", torch::nn::Linear(2048, 2048));
    fc3 = register_module("fc3", torch::nn::Linear(2048, 10));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    return fc3->forward(torch::relu(fc2->forward(torch::relu(fc1->forward(x)))));
  }
};

struct Args {
  std::string model = "cnn";
  int rank = 0;
  int world = 2;
  std::string store;
  std::string address = "127.0.0.1";
  int steps = 40;
  double bucket_mib = 0;  // 0: the runtime's default
  std::string overlap = "auto";
  std::string backend = "gloo";
  std::string compress = "none";
  int node = -1;  // -1: the rank
  int local_rank = 0;
  int local_world = 1;
  int piece_kib = 0;  // > 0: cross-step pieces of this many KiB
  int digits = 0;     // > 0: train the CNN on the digits data for this many steps
};

bool Parse(int argc, char** argv, Args& args) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--model")
      args.model = value;
    else if (flag == "--rank")
      args.rank = std::atoi(value.c_str());
    else if (flag == "--world")
      args.world = std::atoi(value.c_str());
    else if (flag == "--store")
      args.store = value;
    else if (flag == "--address")
      args.address = value;
    else if (flag == "--steps")
      args.steps = std::atoi(value.c_str());
    else if (flag == "--bucket-mib")
      args.bucket_mib = std::atof(value.c_str());
    else if (flag == "--overlap")
      args.overlap = value;
    else if (flag == "--backend")
      args.backend = value;
    else if (flag == "--compress")
      args.compress = value;
    else if (flag == "--piece-kib")
      args.piece_kib = std::atoi(value.c_str());
    else if (flag == "--digits")
      args.digits = std::atoi(value.c_str());
    else if (flag == "--node")
      args.node = std::atoi(value.c_str());
    else if (flag == "--local-rank")
      args.local_rank = std::atoi(value.c_str());
    else if (flag == "--local-world")
      args.local_world = std::atoi(value.c_str());
    else
      return false;
  }
  return argc % 2 == 1 && (args.model == "cnn" || args.model == "mlp") && !args.store.empty() &&
         (args.digits == 0 || args.model == "cnn") &&
         (args.overlap == "sync" || args.overlap == "cross" || args.overlap == "auto") &&
         (args.compress == "none" || args.compress == "fp16" || args.compress == "bf16") && args.world >= 1 &&
         args.rank >= 0 && args.rank < args.world && args.steps > 0;
}

// Records [begin, end) of the digits as images [N, 1, 8, 8] in 0..1 and labels.
std::pair<torch::Tensor, torch::Tensor> Digits(const digits::Dataset& data, size_t begin, size_t end) {
  const auto n = static_cast<int64_t>(end - begin);
  torch::Tensor x = torch::empty({n, 1, 8, 8});
  torch::Tensor y = torch::empty({n}, torch::kInt64);
  float* px = x.data_ptr<float>();
  int64_t* py = y.data_ptr<int64_t>();
  for (size_t i = begin; i < end; ++i) {
    for (size_t k = 0; k < digits::kPixels; ++k)
      *px++ = static_cast<float>(data.pixels[i * digits::kPixels + k]) / digits::kMaxIntensity;
    *py++ = data.labels[i];
  }
  return {x, y};
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (!Parse(argc, argv, args)) {
    std::fprintf(
        stderr,
        "usage: %s --model cnn|mlp --rank R --world W --store DIR --address ADDR [--steps N]\n"
        "       [--overlap sync|cross|auto] [--compress none|fp16|bf16] [--digits N] [--backend gloo|auto] "
        "[--node K --local-rank L --local-world M]\n",
        argv[0]);
    return 4;
  }
  torch::set_num_threads(1);
  torch::manual_seed(1234 + args.rank);  // every rank its own data; rank 0's weights for all

  ring::trial::RankInfo self;
  self.rank = args.rank;
  self.world_size = args.world;
  self.local_rank = args.local_rank;
  self.local_world_size = args.local_world;
  self.agent_id = "node-" + std::to_string(args.node < 0 ? args.rank : args.node);
  self.address = args.address;
  auto group = ring::trial::ConnectProcessGroup(self, ring::trial::FileStore(args.store),
                                                {.backend = args.backend, .rendezvous_timeout = 120s});

  std::shared_ptr<torch::nn::Module> module;
  std::function<torch::Tensor(const torch::Tensor&)> forward;
  torch::Tensor x, y;
  if (args.model == "cnn") {
    auto net = std::make_shared<digits::NetImpl>(0.0);
    forward = [net](const torch::Tensor& in) { return net->forward(in); };
    module = net;
    x = torch::rand({32, 1, 8, 8});
    y = torch::randint(0, 10, {32}, torch::kInt64);
  } else {
    auto net = std::make_shared<Mlp>();
    forward = [net](const torch::Tensor& in) { return net->forward(in); };
    module = net;
    x = torch::randn({64, 1024});
    y = torch::randint(0, 10, {64}, torch::kInt64);
  }
  ring::trial::DistributedModuleOptions options;
  if (args.bucket_mib > 0) options.reducer.bucket_bytes = static_cast<size_t>(args.bucket_mib * (1 << 20));
  options.overlap = args.overlap == "sync"    ? ring::trial::StepOverlap::kSynchronous
                    : args.overlap == "cross" ? ring::trial::StepOverlap::kCrossStep
                                              : ring::trial::StepOverlap::kAuto;
  options.compression = args.compress == "fp16"   ? ring::trial::GradientCompression::kFloat16
                        : args.compress == "bf16" ? ring::trial::GradientCompression::kBFloat16
                                                  : ring::trial::GradientCompression::kNone;
  if (args.piece_kib > 0) options.piece_bytes = static_cast<size_t>(args.piece_kib) << 10;
  ring::trial::DistributedModule ddp(*group, *module, options);
  const double lr = args.digits > 0 ? 0.05 : 0.01;
  ddp.set_optimizer([lr](std::vector<torch::Tensor> params) {
    return std::make_unique<torch::optim::SGD>(params, torch::optim::SGDOptions(lr).momentum(0.9));
  });
  const bool cross = ddp.cross_step();
  const std::string label = std::string("ringmaster-") + (cross ? "cross" : "sync") +
                            (args.compress == "none" ? "" : "-" + args.compress);

  if (args.digits > 0) {
    // This rank's share of the training records, 32 a step, round and round.
    const digits::Dataset data = digits::Load(digits::kDefaultPath);
    const auto [train_x, train_y] = Digits(data, 0, 1500);
    const auto [val_x, val_y] = Digits(data, 1500, data.size());
    const torch::Tensor mine = torch::arange(args.rank, 1500, args.world);
    for (int step = 0; step < args.digits; ++step) {
      const torch::Tensor at = mine.index_select(0, torch::arange(step * 32, step * 32 + 32) % mine.size(0));
      torch::Tensor loss = torch::nn::functional::cross_entropy(forward(train_x.index_select(0, at)),
                                                                train_y.index_select(0, at));
      loss.backward();
      ddp.step();
    }
    ddp.finish();
    group->barrier(60s);
    torch::NoGradGuard no_grad;
    const double accuracy = forward(val_x).argmax(1).eq(val_y).to(torch::kFloat64).mean().item<double>();
    if (args.rank == 0) std::printf("accuracy cnn %s %.4f\n", label.c_str(), accuracy);
    return 0;
  }

  std::vector<double> ms, wait_ms, reduce_ms;
  auto millis = [](auto d) { return std::chrono::duration<double, std::milli>(d).count(); };
  ring::trial::PriorityReducerStats before;
  for (int step = 0; step < args.steps + 5; ++step) {
    const auto t0 = std::chrono::steady_clock::now();
    torch::Tensor loss = torch::nn::functional::cross_entropy(forward(x), y);
    loss.backward();
    ddp.step();
    const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - t0;
    const ring::trial::PriorityReducerStats now = ddp.cross_step_totals();
    if (step >= 5) {
      ms.push_back(took.count());
      if (cross) {
        wait_ms.push_back(millis(now.wait_time - before.wait_time));
        reduce_ms.push_back(
            millis(now.reduce_time - before.reduce_time + now.agree_time - before.agree_time));
      } else {
        wait_ms.push_back(millis(ddp.last_iteration().wait_time));
        reduce_ms.push_back(millis(ddp.last_iteration().reduce_time));
      }
    }
    before = now;
  }
  ddp.finish();
  group->barrier(60s);
  auto mean = [](const std::vector<double>& v) {
    return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  };
  const double step_mean = mean(ms);
  std::sort(ms.begin(), ms.end());
  if (args.rank == 0)
    std::printf("step %s %s %.2f %.2f %.2f %.2f\n", args.model.c_str(), label.c_str(), ms[ms.size() / 2],
                step_mean, mean(wait_ms), mean(reduce_ms));
  return 0;
}
