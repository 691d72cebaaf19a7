#include "data_parallel_svm.h"

#include "ring/trial/data_sampler.h"

namespace svm {

using ring::trial::ReduceOp;

DataParallelSvm::DataParallelSvm(ring::trial::ProcessGroup& group, LinearSvm& model,
                                 const SgdOptions& options)
    : group_(group), model_(model), options_(options), gradients_(model.weights.size() + model.bias.size()) {
  grad_w_ = std::span<float>(gradients_).first(model.weights.size());
  grad_b_ = std::span<float>(gradients_).subspan(model.weights.size());
  reducer_ = std::make_unique<ring::trial::GradientReducer>(
      group_, std::vector<std::span<float>>{grad_w_, grad_b_},
      ring::trial::ReducerOptions{.timeout = options_.timeout});
}

DataParallelSvm::~DataParallelSvm() = default;

void DataParallelSvm::BroadcastWeights() {
  ring::trial::BroadcastParameters(group_, {model_.weights, model_.bias}, 0, options_.timeout);
}

double DataParallelSvm::Step(int64_t step, const Features& data, std::span<const uint64_t> indices) {
  const double hinge =
      BatchGradient(model_, data, indices, options_.loss, options_.regularization, grad_w_, grad_b_);
  // The whole gradient is final at once; the bias (registered last) goes first,
  // as a backward pass would hand it over.
  reducer_->mark_ready(1);
  reducer_->mark_ready(0);
  reducer_->wait();
  const double lr = LearningRate(options_.learning_rate, options_.lr_decay, step);
  SgdUpdate(model_.weights, grad_w_, lr);
  SgdUpdate(model_.bias, grad_b_, lr);
  return hinge;
}

Evaluation DataParallelSvm::Evaluate(const Features& data) {
  const ring::trial::Shard shard = ring::trial::ShardOf(data.size(), group_.size(), group_.rank());
  double sums[3] = {0, static_cast<double>(shard.count()), 0};  // correct, records, hinge
  for (uint64_t i = shard.begin; i < shard.end; ++i) {
    const auto row = data.row(i);
    if (Predict(model_, row) == data.labels[i]) sums[0] += 1;
    sums[2] += HingeLoss(model_, row, data.labels[i], options_.loss);
  }
  group_.allreduce(std::span<double>(sums), ReduceOp::kSum, options_.timeout);
  return {sums[0], sums[1], sums[2]};
}

}  // namespace svm
