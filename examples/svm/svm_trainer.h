#pragma once
// The SVM trial's training: every rank runs it, each on its shard of every
// step, gradients averaged over the ranks by DataParallelSvm.
#include "ring/trial/trial.h"
#include "trial_state.h"

namespace svm {

// The metrics the trial reports at each validation; searcher.metric must be
// one of them. validation_loss is the mean hinge loss (without the penalty).
inline constexpr const char* kValidationMetrics[] = {"validation_accuracy", "validation_error",
                                                     "validation_loss"};

// Trains through the searcher's operations; returns the process's exit code
// (0 trained or stopped when asked, 3 diverged). Throws the runtime's errors,
// DataError for missing or malformed data.
int Train(ring::trial::Context& ctx, const Hparams& h);

}  // namespace svm
