#pragma once
// DistributedModule: data-parallel training of a torch::nn::Module over the
// ranks of a ProcessGroup, the way PyTorch's DistributedDataParallel does it.
//
//   auto group = ring::trial::ConnectProcessGroup(ctx);
//   Net net;
//   torch::optim::SGD optimizer(net->parameters(), lr);
//   ring::trial::DistributedModule ddp(*group, *net);  // rank 0's parameters and buffers on every rank
//   for (...) {
//     torch::Tensor loss = torch::nn::functional::cross_entropy(net->forward(x), y);
//     loss.backward();    // each gradient goes to the reducer as soon as it is final
//     ddp.synchronize();  // param.grad() now holds the average over the ranks
//     optimizer.step();
//   }
//
// Overlap. A hook on every parameter (Tensor::register_hook) copies its
// gradient into one flat buffer laid out in registration order and marks it
// ready in a GradientReducer, whose background thread all-reduces each bucket
// (about bucket_bytes of the last parameters first) while backward is still
// computing the earlier layers' gradients. synchronize() waits for the last
// bucket and writes the averages into param.grad(), replacing what backward
// accumulated there (so the gradients of one backward() per synchronize() are
// averaged; accumulating over several backward passes is not supported).
// Parameters that received no gradient in this backward (unused in the
// forward, or no backward at all on a rank without records) count as zero, so
// every rank still joins every bucket's allreduce.
//
// Cross-step overlap. Handing the module the optimizer goes further:
//
//   ddp.set_optimizer([](std::vector<torch::Tensor> params) {
//     return std::make_unique<torch::optim::SGD>(params, torch::optim::SGDOptions(0.01).momentum(0.9));
//   });
//   for (...) {
//     torch::Tensor loss = torch::nn::functional::cross_entropy(net->forward(x), y);
//     loss.backward();
//     ddp.step();  // returns at once; the updates land while the next forward runs
//   }
//   ddp.finish();  // every update applied: before evaluating, saving or reading parameters
//
// The gradients are averaged in pieces of about piece_bytes by a
// PriorityReducer, the first layers' pieces ahead of the later ones'. The
// optimizer is built once per layer (the parameters of one submodule), and a
// layer's update is applied as soon as the next forward pass is about to use
// its parameters (an operator observer on the training thread waits for the
// layer's pieces, then steps its optimizer). So the next forward pass starts
// as soon as the first layer's average has landed, while the later layers'
// are still on the wire. The result is bit for bit that of the synchronous
// step (see PriorityReducer, "Exactness"): the per-layer optimizers compute
// each parameter's update from its own gradient and state only.
//
// That holds for optimizers that update each parameter from its own
// gradient (SGD, Adam, AdamW, Adagrad, RMSprop). Others (LBFGS, or any the
// module does not know), and steps that need every gradient before any
// update (set needs_all_gradients, e.g. for global-norm clipping), take the
// synchronous step: step() waits for every average and steps one optimizer
// over all parameters; the trial log says so. So does a model whose
// gradients fit in one piece (nothing to overlap) and a group of one rank.
//
// Requirements: float32 CPU parameters, the same architecture on every rank
// (the constructor checks the parameter count and sizes against rank 0's).
// Threads: backward() and synchronize() from the training thread; between
// them the process group belongs to the reducer. torch is only forward
// declared here; include <torch/torch.h> where the module is defined.
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ring/trial/distributed.h"
#include "ring/trial/errors.h"
#include "ring/trial/gradient_reducer.h"
#include "ring/trial/priority_reducer.h"

namespace at {
class Tensor;
}
namespace torch::nn {
class Module;
}
namespace torch::optim {
class Optimizer;
}

namespace ring::trial {

enum class StepOverlap { kAuto, kSynchronous, kCrossStep };

struct DistributedModuleOptions {
  ReducerOptions reducer;  // bucket size and per-bucket timeout
  int root = 0;            // whose parameters and buffers every rank starts from
  Timeout broadcast_timeout = kDefaultCollectiveTimeout;
  // With set_optimizer(): kAuto overlaps steps when it can (see above),
  // kSynchronous never does, kCrossStep always does unless the optimizer or
  // needs_all_gradients rules it out.
  StepOverlap overlap = StepOverlap::kAuto;
  size_t piece_bytes = size_t{1} << 20;  // cross-step pieces
  bool needs_all_gradients = false;      // the step reads every gradient before any update
  // Opt-in 16-bit compression of the cross-step pieces (see
  // GradientCompression); the synchronous step does not compress and says so.
  GradientCompression compression = GradientCompression::kNone;
};

// Builds an optimizer over the given parameters.
using OptimizerFactory = std::function<std::unique_ptr<torch::optim::Optimizer>(std::vector<at::Tensor>)>;

class DistributedModule {
 public:
  // Checks that every rank has the same parameter sizes, broadcasts the
  // root's parameters and buffers, and registers the gradient hooks. Throws
  // ConfigError for a parameter that is not a float32 CPU tensor, a module
  // without trainable parameters, or ranks whose parameters differ (naming
  // the first difference); CollectiveError from the group.
  DistributedModule(ProcessGroup& group, torch::nn::Module& module, DistributedModuleOptions options = {});
  // Removes the hooks; waits for a reduction in flight (see ~GradientReducer).
  ~DistributedModule();
  DistributedModule(const DistributedModule&) = delete;
  DistributedModule& operator=(const DistributedModule&) = delete;

  // After backward(): marks the parameters without a gradient as zero, waits
  // until every bucket is averaged and writes the averages into
  // param.grad(). Throws CollectiveError when an allreduce failed or timed
  // out (the group is unusable after that), ReducerUsageError when a
  // parameter got gradients from two backward passes.
  void synchronize();

  // The optimizer that step() applies: built by `make` once over every
  // parameter, or once per layer when steps overlap. Call once, before the
  // first step(). Throws ConfigError when `make` returns no optimizer.
  void set_optimizer(const OptimizerFactory& make);
  // After backward(): averages the gradients and applies the optimizer, at
  // once (synchronous) or layer by layer while the next forward runs (cross
  // step). Throws ConfigError before set_optimizer(), CollectiveError and
  // ReducerUsageError as synchronize() does.
  void step();
  // Every update of the last step() applied (a no-op when steps do not
  // overlap).
  void finish();
  // Whether step() overlaps steps, and why not when it does not.
  bool cross_step() const;
  const std::string& step_mode() const;
  // Each optimizer step() applies (one, or one per layer), e.g. to change
  // the learning rate. Not while a step is in flight: call finish() first.
  void for_each_optimizer(const std::function<void(torch::optim::Optimizer&)>& fn);

  // The root's parameters and buffers to every rank again (e.g. after the
  // root alone changed them). Not while an iteration is in flight.
  void broadcast_parameters();

  size_t parameter_count() const;
  const std::vector<ReducerBucket>& buckets() const;
  ReducerStats last_iteration() const;
  ReducerStats totals() const;
  // The cross-step reducer's totals (zero when steps do not overlap).
  PriorityReducerStats cross_step_totals() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace ring::trial
