#include "ring/trial/torch/distributed_module.h"

#include <torch/nn/module.h>
#include <torch/optim.h>
#include <torch/types.h>

#include <atomic>
#include <iostream>
#include <span>
#include <string>

#include "cross_step.h"

namespace ring::trial {
namespace {

// FNV-1a over the parameter shapes: equal on ranks with the same architecture.
int64_t ShapeDigest(const std::vector<torch::Tensor>& params) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](int64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= static_cast<uint64_t>(v >> (8 * i)) & 0xff;
      h *= 1099511628211ull;
    }
  };
  for (const auto& p : params) {
    mix(p.dim());
    for (int64_t s : p.sizes()) mix(s);
  }
  return static_cast<int64_t>(h >> 1);
}

DataType BufferType(const torch::Tensor& t, const std::string& name) {
  switch (t.scalar_type()) {
    case torch::kFloat32:
      return DataType::kFloat32;
    case torch::kFloat64:
      return DataType::kFloat64;
    case torch::kInt32:
      return DataType::kInt32;
    case torch::kInt64:
      return DataType::kInt64;
    default:
      throw ConfigError("DistributedModule: buffer " + name + " has type " +
                        std::string(c10::toString(t.scalar_type())) +
                        "; only float32, float64, int32 and int64 buffers can be broadcast");
  }
}

// Optimizers that update each parameter from its own gradient and state.
bool PerParameter(const torch::optim::Optimizer& optimizer) {
  return dynamic_cast<const torch::optim::SGD*>(&optimizer) ||
         dynamic_cast<const torch::optim::Adam*>(&optimizer) ||
         dynamic_cast<const torch::optim::AdamW*>(&optimizer) ||
         dynamic_cast<const torch::optim::Adagrad*>(&optimizer) ||
         dynamic_cast<const torch::optim::RMSprop*>(&optimizer);
}

}  // namespace

struct DistributedModule::State {
  ProcessGroup* group = nullptr;
  torch::nn::Module* module = nullptr;
  DistributedModuleOptions options;
  std::vector<std::string> names;
  std::vector<torch::Tensor> params;           // trainable parameters, registration order
  torch::Tensor flat;                          // every gradient end to end (float32)
  std::vector<torch::Tensor> buffers;          // views of `flat`, one per parameter
  std::unique_ptr<std::atomic<bool>[]> ready;  // marked in this iteration
  std::vector<unsigned> hooks;
  std::unique_ptr<GradientReducer> reducer;
  std::unique_ptr<torch::optim::Optimizer> optimizer;  // synchronous step()
  std::unique_ptr<torch_detail::CrossStep> cross;      // cross-step step()
  std::string mode = "synchronous (no optimizer set)";

  // Why step() cannot overlap steps, or "" when it can.
  std::string Obstacle(const torch::optim::Optimizer& all) const {
    if (options.needs_all_gradients) return "the step needs every gradient before any update";
    if (!PerParameter(all)) return "the optimizer is not one that updates each parameter on its own";
    if (options.overlap == StepOverlap::kCrossStep) return "";
    if (group->size() == 1) return "one rank";
    if (static_cast<size_t>(flat.numel()) * sizeof(float) <= options.piece_bytes)
      return "the gradients fit in one piece";
    return "";
  }

  void CheckSameArchitecture() {
    int64_t mine[3] = {static_cast<int64_t>(params.size()), flat.numel(), ShapeDigest(params)};
    int64_t root[3] = {mine[0], mine[1], mine[2]};
    group->broadcast(std::span<int64_t>(root), options.root, options.broadcast_timeout);
    const bool differs = mine[0] != root[0] || mine[1] != root[1] || mine[2] != root[2];
    int64_t differing[1] = {differs ? 1 : 0};
    group->allreduce(std::span<int64_t>(differing), ReduceOp::kSum, options.broadcast_timeout);
    if (differing[0] == 0) return;
    if (differs)
      throw ConfigError("DistributedModule: rank " + std::to_string(group->rank()) + " has " +
                        std::to_string(mine[0]) + " trainable parameters with " + std::to_string(mine[1]) +
                        " elements, rank " + std::to_string(options.root) + " has " +
                        std::to_string(root[0]) + " with " + std::to_string(root[1]) +
                        (mine[0] == root[0] && mine[1] == root[1] ? " (shapes differ)" : "") +
                        ": every rank must build the same model");
    throw ConfigError("DistributedModule: " + std::to_string(differing[0]) +
                      " rank(s) built a model whose parameters differ from rank " +
                      std::to_string(options.root) + "'s: every rank must build the same model");
  }

  void Broadcast() {
    torch::NoGradGuard no_grad;
    std::vector<std::span<float>> spans;
    spans.reserve(params.size());
    for (auto& p : params) spans.emplace_back(p.data_ptr<float>(), static_cast<size_t>(p.numel()));
    BroadcastParameters(*group, spans, options.root, options.broadcast_timeout);
    for (const auto& item : module->named_buffers()) {
      torch::Tensor b = item.value();
      if (!b.defined() || b.numel() == 0) continue;
      if (!b.is_contiguous() || !b.device().is_cpu())
        throw ConfigError("DistributedModule: buffer " + item.key() + " is not a contiguous CPU tensor");
      group->broadcast(b.data_ptr(), static_cast<size_t>(b.numel()), BufferType(b, item.key()), options.root,
                       options.broadcast_timeout);
    }
  }
};

DistributedModule::DistributedModule(ProcessGroup& group, torch::nn::Module& module,
                                     DistributedModuleOptions options)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.group = &group;
  s.module = &module;
  s.options = options;
  if (options.root < 0 || options.root >= group.size())
    throw ConfigError("DistributedModule: root " + std::to_string(options.root) +
                      " is not a rank of a group of " + std::to_string(group.size()));
  int64_t elements = 0;
  for (const auto& item : module.named_parameters(/*recurse=*/true)) {
    const torch::Tensor& p = item.value();
    if (!p.requires_grad()) continue;
    if (p.scalar_type() != torch::kFloat32 || !p.device().is_cpu() || !p.is_contiguous())
      throw ConfigError("DistributedModule: parameter " + item.key() + " is " + p.toString() +
                        (p.is_contiguous() ? "" : " (not contiguous)") +
                        "; only contiguous float32 CPU parameters are supported");
    s.names.push_back(item.key());
    s.params.push_back(p);
    elements += p.numel();
  }
  if (s.params.empty()) throw ConfigError("DistributedModule: the module has no trainable parameters");
  s.flat = torch::zeros({elements}, torch::kFloat32);
  std::vector<std::span<float>> spans;
  int64_t offset = 0;
  for (const auto& p : s.params) {
    s.buffers.push_back(s.flat.narrow(0, offset, p.numel()).view(p.sizes()));
    spans.emplace_back(s.flat.data_ptr<float>() + offset, static_cast<size_t>(p.numel()));
    offset += p.numel();
  }
  s.ready = std::make_unique<std::atomic<bool>[]>(s.params.size());
  s.CheckSameArchitecture();
  s.Broadcast();
  s.reducer = std::make_unique<GradientReducer>(group, std::move(spans), options.reducer);
  for (size_t i = 0; i < s.params.size(); ++i) {
    State* state = &s;
    s.hooks.push_back(s.params[i].register_hook([state, i](const torch::Tensor& grad) {
      if (grad.is_sparse())
        throw ConfigError("DistributedModule: parameter " + state->names[i] + " got a sparse gradient");
      if (state->cross) return state->cross->on_gradient(i, grad);
      if (state->ready[i].exchange(true))
        throw ReducerUsageError("DistributedModule: parameter " + state->names[i] +
                                " got gradients from two backward passes without synchronize()");
      state->buffers[i].copy_(grad);
      state->reducer->mark_ready(i);
    }));
  }
}

DistributedModule::~DistributedModule() {
  if (!state_) return;
  for (size_t i = 0; i < state_->hooks.size(); ++i) state_->params[i].remove_hook(state_->hooks[i]);
}

void DistributedModule::synchronize() {
  State& s = *state_;
  if (s.cross) throw ReducerUsageError("DistributedModule: synchronize() while steps overlap; call step()");
  for (size_t i = 0; i < s.params.size(); ++i)
    if (!s.ready[i].exchange(true)) {
      s.buffers[i].zero_();
      s.reducer->mark_ready(i);
    }
  s.reducer->wait();
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < s.params.size(); ++i) {
    torch::Tensor& grad = s.params[i].mutable_grad();
    if (grad.defined() && grad.sizes() == s.buffers[i].sizes() && !grad.is_sparse())
      grad.copy_(s.buffers[i]);
    else
      grad = s.buffers[i].clone();
    s.ready[i] = false;
  }
}

void DistributedModule::set_optimizer(const OptimizerFactory& make) {
  State& s = *state_;
  if (s.optimizer || s.cross)
    throw ReducerUsageError("DistributedModule: set_optimizer() was already called");
  std::unique_ptr<torch::optim::Optimizer> all = make(s.params);
  if (!all) throw ConfigError("DistributedModule: the optimizer factory returned no optimizer");
  const std::string obstacle = s.Obstacle(*all);
  const bool overlap = s.options.overlap != StepOverlap::kSynchronous && obstacle.empty();
  if (!overlap) {
    s.optimizer = std::move(all);
    s.mode = s.options.overlap == StepOverlap::kSynchronous ? "synchronous (configured)"
                                                            : "synchronous: " + obstacle;
    std::cerr << "[ring.trial] DistributedModule: " << s.mode
              << "; every gradient is averaged before the optimizer steps"
              << (s.options.compression != GradientCompression::kNone ? ", without compression" : "")
              << std::endl;
    return;
  }
  s.cross = std::make_unique<torch_detail::CrossStep>(*s.group, s.params, s.names, s.flat, s.buffers, make,
                                                      s.options);
  s.mode = "cross-step";
  std::cerr << "[ring.trial] DistributedModule: cross-step: " << s.cross->layers() << " layers, "
            << s.cross->pieces() << " pieces"
            << (s.options.compression == GradientCompression::kFloat16    ? " sent as float16"
                : s.options.compression == GradientCompression::kBFloat16 ? " sent as bfloat16"
                                                                          : "")
            << "; each layer's update lands as the next forward needs it" << std::endl;
}

void DistributedModule::step() {
  State& s = *state_;
  if (s.cross) return s.cross->step();
  if (!s.optimizer) throw ConfigError("DistributedModule: step() before set_optimizer()");
  synchronize();
  s.optimizer->step();
}

void DistributedModule::finish() {
  if (state_->cross) state_->cross->finish();
}

bool DistributedModule::cross_step() const {
  return state_->cross != nullptr;
}

const std::string& DistributedModule::step_mode() const {
  return state_->mode;
}

void DistributedModule::for_each_optimizer(const std::function<void(torch::optim::Optimizer&)>& fn) {
  State& s = *state_;
  if (s.cross) return s.cross->for_each_optimizer(fn);
  if (s.optimizer) fn(*s.optimizer);
}

PriorityReducerStats DistributedModule::cross_step_totals() const {
  return state_->cross ? state_->cross->totals() : PriorityReducerStats{};
}

void DistributedModule::broadcast_parameters() {
  state_->Broadcast();
}

size_t DistributedModule::parameter_count() const {
  return state_->params.size();
}
const std::vector<ReducerBucket>& DistributedModule::buckets() const {
  return state_->reducer->buckets();
}
ReducerStats DistributedModule::last_iteration() const {
  return state_->reducer->last_iteration();
}
ReducerStats DistributedModule::totals() const {
  return state_->reducer->totals();
}

}  // namespace ring::trial
