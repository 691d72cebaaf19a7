#pragma once
// The cross-step half of DistributedModule: gradients averaged in priority
// order by a PriorityReducer, one optimizer per layer, and each layer's
// update applied when the next forward pass first touches its parameters.
#include <torch/optim/optimizer.h>
#include <torch/types.h>

#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "ring/trial/priority_reducer.h"
#include "ring/trial/torch/distributed_module.h"

namespace ring::trial::torch_detail {

// Layers: parameters grouped by the submodule that owns them (the name up
// to its last dot), in registration order of their first parameter.
std::vector<std::vector<size_t>> GroupByModule(const std::vector<std::string>& names);

class CrossStep {
 public:
  // `flat` holds every gradient end to end; `buffers` are its views, one per
  // parameter. Everything must outlive this object.
  CrossStep(ProcessGroup& group, const std::vector<torch::Tensor>& params,
            const std::vector<std::string>& names, torch::Tensor flat,
            const std::vector<torch::Tensor>& buffers, const OptimizerFactory& make,
            const DistributedModuleOptions& options);
  ~CrossStep();
  CrossStep(const CrossStep&) = delete;
  CrossStep& operator=(const CrossStep&) = delete;

  // From the gradient hook of parameter i (training thread).
  void on_gradient(size_t i, const torch::Tensor& grad);
  void step();
  void finish();
  void for_each_optimizer(const std::function<void(torch::optim::Optimizer&)>& fn);
  PriorityReducerStats totals() const { return reducer_->totals(); }
  size_t layers() const { return layers_.size(); }
  size_t pieces() const { return reducer_->pieces().size(); }

  // The operator observer: a tensor the next op reads.
  void touch(const torch::Tensor& t);
  bool idle() const { return pending_layers_ == 0; }

 private:
  struct Layer {
    std::vector<size_t> params;
    std::unique_ptr<torch::optim::Optimizer> optimizer;
    bool pending = false;  // stepped, update not applied yet
  };
  void ensure(size_t layer);
  void rethrow();  // what the operator observer caught, once

  const std::vector<torch::Tensor>& params_;
  const std::vector<std::string>& names_;
  const std::vector<torch::Tensor>& buffers_;
  std::vector<Layer> layers_;
  std::vector<size_t> layer_of_;
  std::unordered_map<const void*, std::vector<size_t>> layers_of_storage_;
  std::vector<bool> marked_;  // per parameter, got its gradient this step
  size_t pending_layers_ = 0;
  std::unique_ptr<PriorityReducer> reducer_;
  uint64_t observer_ = 0;  // the RecordFunction callback of the training thread
  std::thread::id observer_thread_;
  std::exception_ptr failure_;  // caught by the observer, thrown by the next step() or finish()
};

}  // namespace ring::trial::torch_detail
