#pragma once
// The SVM trial's hyperparameters and the training loop's own state (kept in
// every checkpoint's metadata beside the sampler's).
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "ring/trial/trial.h"
#include "svm_model.h"

namespace svm {

struct Hparams {
  double learning_rate = 0;      // step size at step 1
  double lr_decay = 0.01;        // inverse-time decay: learning_rate / (1 + lr_decay * (step - 1))
  double regularization = 1e-4;  // L2 penalty on the weights, lambda / 2 * |W|^2
  Multiclass multiclass = Multiclass::kOneVsRest;
  int64_t batch_size = 32;       // records per rank per step
  int64_t report_every = 10;     // training loss every N batches
  int64_t validate_every = 0;    // 0: at the end of each operation and when min_validation_period is due
  int64_t checkpoint_every = 0;  // 0: when min_checkpoint_period is due, at the end and when asked to stop
  int64_t validation_size = 300;
  uint64_t split_seed = 0;               // the train/validation split: the same for every trial of a search
  std::optional<std::string> data_path;  // else RING_DIGITS_PATH, else Debian's python3-sklearn copy
  int64_t batch_sleep_ms = 0;  // slows training down (demos, preemption tests); no effect on results
};

// Reads and checks the hyperparameters; throws HparamError with what to fix.
Hparams ReadHparams(const ring::trial::Context& ctx);

// Between batches; identical on every rank.
struct LoopState {
  int64_t batch = 0;          // global steps done
  double loss_sum = 0;        // hinge loss summed over the records since the last report
  double loss_records = 0;    // records in loss_sum
  int64_t validated_at = -1;  // batches of the last validation

  nlohmann::json ToJson() const;
  // Throws CheckpointError naming the field when malformed.
  static LoopState FromJson(const nlohmann::json& json);
};

}  // namespace svm
