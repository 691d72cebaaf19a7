#pragma once
// Data-parallel SGD of a LinearSvm over a trial's process group: every rank
// holds the same weights (rank 0's, broadcast at the start), computes the
// gradient on its own records of each step, and the runtime's
// GradientReducer averages the gradients over the ranks before every rank
// applies the same update. With the sampler's full steps (drop_last) every
// rank has the same number of records, so the average of the ranks' mean
// gradients is the mean gradient over the whole step: W ranks of B records
// follow the path of one rank of W * B records, up to float rounding.
// Used by the training thread only (it owns the group while a step runs).
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "ring/trial/distributed.h"
#include "ring/trial/gradient_reducer.h"
#include "svm_model.h"

namespace svm {

struct SgdOptions {
  Multiclass loss = Multiclass::kOneVsRest;
  double learning_rate = 0.1;
  double lr_decay = 0;  // see LearningRate()
  double regularization = 0;
  ring::trial::Timeout timeout = ring::trial::kDefaultCollectiveTimeout;
};

// Sums over the whole data set, each rank having evaluated its own shard.
struct Evaluation {
  double correct = 0;
  double records = 0;
  double hinge_sum = 0;
  double accuracy() const { return records > 0 ? correct / records : 0; }
  double mean_hinge() const { return records > 0 ? hinge_sum / records : 0; }
};

class DataParallelSvm {
 public:
  // `model` must outlive this object; its sizes stay fixed.
  DataParallelSvm(ring::trial::ProcessGroup& group, LinearSvm& model, const SgdOptions& options);
  ~DataParallelSvm();

  // Rank 0's weights and bias to every rank.
  void BroadcastWeights();

  // Global step `step` (1, 2, ...): this rank's gradient on `indices`,
  // averaged over the ranks, then p -= LearningRate(step) * g on every rank.
  // Returns this rank's sum of hinge losses before the update.
  double Step(int64_t step, const Features& data, std::span<const uint64_t> indices);

  // Accuracy and hinge loss over all of `data`: each rank evaluates its
  // ShardOf() and the sums are added up over the ranks (one allreduce), so
  // the figures are those of one process evaluating every record.
  Evaluation Evaluate(const Features& data);

  ring::trial::ReducerStats totals() const { return reducer_->totals(); }

 private:
  ring::trial::ProcessGroup& group_;
  LinearSvm& model_;
  const SgdOptions options_;
  // The weights' and bias's gradients end to end in one buffer, so the
  // reducer averages them in place.
  std::vector<float> gradients_;
  std::span<float> grad_w_, grad_b_;
  std::unique_ptr<ring::trial::GradientReducer> reducer_;
};

}  // namespace svm
