#pragma once
// The quadratic trial's hyperparameters and the state it checkpoints: the
// model's (model.bin) and the training loop's (loop.txt), in exact formats so
// that a run resumed from any checkpoint continues bit for bit.
#include <cstddef>
#include <cstdint>

#include "linear_regression.h"
#include "ring/trial/trial.h"

namespace quadratic {

constexpr std::size_t kTrainSize = 2048;

struct Hparams {
  double learning_rate = 0;
  int64_t batch_size = 0;
  int64_t report_every = 0;
  double momentum = 0;
  int64_t checkpoint_every = 100;  // 0: only when min_checkpoint_period is due, and at the end
  int64_t batch_sleep_ms = 0;      // slows training down (demos, fault tests); no effect on results
};

// Reads and checks the hyperparameters; throws HparamError with what to fix.
Hparams ReadHparams(const ring::trial::Context& ctx);

// The training loop's own state between batches, saved beside the model's.
struct LoopState {
  int64_t batch = 0;  // batches done
  double loss_sum = 0;
  int64_t loss_count = 0;
  int64_t reports = 0;
  int64_t validated_at = -1;
};

// model.bin: the model's state (binary, little-endian). loop.txt: the loop's,
// integers only (the loss sum as its IEEE-754 bits), so both are exact and a
// state gives the same bytes every time.
void SaveCheckpoint(ring::trial::Context& ctx, const LinearRegression& model, const LoopState& loop);
// Throws CheckpointError when loop.txt is malformed or does not match the registration.
void RestoreCheckpoint(const ring::trial::CheckpointInfo& info, LinearRegression& model, LoopState& loop);

}  // namespace quadratic
