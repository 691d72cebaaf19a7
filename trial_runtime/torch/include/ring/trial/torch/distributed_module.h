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
// Requirements: float32 CPU parameters, the same architecture on every rank
// (the constructor checks the parameter count and sizes against rank 0's).
// Threads: backward() and synchronize() from the training thread; between
// them the process group belongs to the reducer. torch is only forward
// declared here; include <torch/torch.h> where the module is defined.
#include <cstddef>
#include <memory>
#include <vector>

#include "ring/trial/distributed.h"
#include "ring/trial/errors.h"
#include "ring/trial/gradient_reducer.h"

namespace torch::nn {
class Module;
}

namespace ring::trial {

struct DistributedModuleOptions {
  ReducerOptions reducer;  // bucket size and per-bucket timeout
  int root = 0;            // whose parameters and buffers every rank starts from
  Timeout broadcast_timeout = kDefaultCollectiveTimeout;
};

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

  // The root's parameters and buffers to every rank again (e.g. after the
  // root alone changed them). Not while an iteration is in flight.
  void broadcast_parameters();

  size_t parameter_count() const;
  const std::vector<ReducerBucket>& buckets() const;
  ReducerStats last_iteration() const;
  ReducerStats totals() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace ring::trial
