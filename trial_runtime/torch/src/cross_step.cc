#include "cross_step.h"

#include <ATen/record_function.h>

#include <exception>
#include <iostream>
#include <thread>

#include "ring/trial/errors.h"

namespace ring::trial::torch_detail {
namespace {

// The cross step whose updates the training thread's next ops wait for.
thread_local CrossStep* t_gate = nullptr;

// RecordFunction start callback, on the training thread only: before an op
// runs, the layers whose parameters it reads get their update.
std::unique_ptr<at::ObserverContext> OnOp(const at::RecordFunction& fn) {
  CrossStep* gate = t_gate;
  if (gate == nullptr || gate->idle()) return nullptr;
  for (const c10::IValue& v : fn.inputs()) {
    if (v.isTensor()) {
      gate->touch(v.toTensor());
    } else if (v.isTensorList()) {
      for (const at::Tensor& t : v.toTensorList().vec()) gate->touch(t);
    }
    if (gate->idle()) break;
  }
  return nullptr;
}

const void* StorageOf(const torch::Tensor& t) {
  if (!t.defined() || !t.has_storage()) return nullptr;
  return t.storage().unsafeGetStorageImpl();
}

}  // namespace

std::vector<std::vector<size_t>> GroupByModule(const std::vector<std::string>& names) {
  std::vector<std::vector<size_t>> groups;
  std::unordered_map<std::string, size_t> index;
  for (size_t i = 0; i < names.size(); ++i) {
    const size_t dot = names[i].rfind('.');
    const std::string owner = dot == std::string::npos ? std::string() : names[i].substr(0, dot);
    auto [it, inserted] = index.emplace(owner, groups.size());
    if (inserted) groups.emplace_back();
    groups[it->second].push_back(i);
  }
  return groups;
}

CrossStep::CrossStep(ProcessGroup& group, const std::vector<torch::Tensor>& params,
                     const std::vector<std::string>& names, torch::Tensor flat,
                     const std::vector<torch::Tensor>& buffers, const OptimizerFactory& make,
                     const DistributedModuleOptions& options)
    : params_(params),
      names_(names),
      buffers_(buffers),
      layer_of_(params.size()),
      marked_(params.size(), false) {
  for (auto& members : GroupByModule(names)) {
    std::vector<torch::Tensor> tensors;
    for (size_t i : members) {
      tensors.push_back(params[i]);
      layer_of_[i] = layers_.size();
    }
    Layer layer;
    layer.optimizer = make(std::move(tensors));
    if (!layer.optimizer)
      throw ConfigError("DistributedModule: the optimizer factory returned no optimizer for " +
                        names[members[0]]);
    layer.params = std::move(members);
    layers_.push_back(std::move(layer));
  }
  for (size_t l = 0; l < layers_.size(); ++l)
    for (size_t i : layers_[l].params) {
      auto& of = layers_of_storage_[StorageOf(params[i])];
      if (of.empty() || of.back() != l) of.push_back(l);
    }
  std::vector<size_t> sizes;
  for (const auto& p : params) sizes.push_back(static_cast<size_t>(p.numel()));
  reducer_ = std::make_unique<PriorityReducer>(
      group, std::span<float>(flat.data_ptr<float>(), static_cast<size_t>(flat.numel())), std::move(sizes),
      PriorityReducerOptions{.piece_bytes = options.piece_bytes,
                             .timeout = options.reducer.timeout,
                             .compression = options.compression});
}

CrossStep::~CrossStep() {
  if (t_gate == this) t_gate = nullptr;
  if (observer_ != 0 && observer_thread_ == std::this_thread::get_id()) at::removeCallback(observer_);
}

void CrossStep::rethrow() {
  if (!failure_) return;
  std::exception_ptr failure = failure_;
  failure_ = nullptr;
  std::rethrow_exception(failure);
}

void CrossStep::ensure(size_t l) {
  Layer& layer = layers_[l];
  if (!layer.pending) return;
  for (size_t i : layer.params) reducer_->wait(i);
  {
    // The update's own ops are not observed, and record no gradient.
    at::RecordFunctionGuard unobserved(false);
    torch::NoGradGuard no_grad;
    for (size_t i : layer.params) params_[i].mutable_grad() = buffers_[i];
    layer.optimizer->step();
    // Not left pointing into the reducer's buffer: the next backward would
    // accumulate into it.
    for (size_t i : layer.params) params_[i].mutable_grad() = torch::Tensor();
  }
  for (size_t i : layer.params) reducer_->release(i);
  layer.pending = false;
  --pending_layers_;
}

void CrossStep::touch(const torch::Tensor& t) {
  const auto found = layers_of_storage_.find(StorageOf(t));
  if (found == layers_of_storage_.end()) return;
  try {
    for (size_t l : found->second) ensure(l);
  } catch (...) {
    // RecordFunction swallows what its callbacks throw: keep it for step().
    if (!failure_) failure_ = std::current_exception();
  }
}

void CrossStep::on_gradient(size_t i, const torch::Tensor& grad) {
  ensure(layer_of_[i]);  // the previous step's update has read this buffer
  if (marked_[i])
    throw ReducerUsageError("DistributedModule: parameter " + names_[i] +
                            " got gradients from two backward passes without step()");
  buffers_[i].copy_(grad);
  marked_[i] = true;
  reducer_->mark_ready(i);
}

void CrossStep::step() {
  rethrow();
  if (observer_ == 0) {
    observer_ = at::addThreadLocalCallback(
        at::RecordFunctionCallback(&OnOp).needsInputs(true).scopes({at::RecordScope::FUNCTION}));
    observer_thread_ = std::this_thread::get_id();
  } else if (observer_thread_ != std::this_thread::get_id()) {
    throw ReducerUsageError("DistributedModule: step() from a thread other than the first step()'s");
  }
  for (size_t i = 0; i < params_.size(); ++i) {
    if (marked_[i]) continue;  // unused in this forward, or no backward at all: counts as zero
    ensure(layer_of_[i]);
    buffers_[i].zero_();
    reducer_->mark_ready(i);
  }
  std::fill(marked_.begin(), marked_.end(), false);
  for (auto& layer : layers_) layer.pending = true;
  pending_layers_ = layers_.size();
  t_gate = this;
}

void CrossStep::finish() {
  for (size_t l = 0; l < layers_.size(); ++l) ensure(l);
  rethrow();
}

void CrossStep::for_each_optimizer(const std::function<void(torch::optim::Optimizer&)>& fn) {
  finish();
  for (auto& layer : layers_) fn(*layer.optimizer);
}

}  // namespace ring::trial::torch_detail
