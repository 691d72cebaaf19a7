// svm_trial: a data-parallel linear SVM, the classical-ML example of the
// platform. A multiclass linear SVM (one-vs-rest or Crammer-Singer hinge
// loss, L2 penalty) learns the handwritten digits (8x8 images, pixels scaled
// to 0..1) by SGD with an inverse-time learning-rate decay; each rank trains
// on its shard of every step (DistributedSampler), the gradients are
// averaged over the ranks by the runtime's GradientReducer, and validation
// accuracy is computed on disjoint shards and summed over the ranks. It
// trains through the searcher's operations, reports the training loss and
// validation_accuracy / validation_error / validation_loss, checkpoints
// weights, sampler and loop (resumed bit for bit), and when asked to stop it
// checkpoints, acknowledges and exits 0. Without a master it runs alone
// (world size 1). No libtorch: plain C++.
//
// Exit codes: 0 trained (or stopped when asked, after checkpointing), 2 bad
// hyperparameters (reported to the searcher), configuration or data, 3
// diverged, 4 other errors (e.g. a corrupted checkpoint), 5 the master ended
// this allocation or stayed unreachable, 6 the ranks lost each other (a
// collective or the rendezvous failed).
#include <cstdio>
#include <exception>
#include <string>

#include "ring/trial/trial.h"
#include "svm_trainer.h"
#include "trial_state.h"

namespace {

int Run(ring::trial::Context& ctx) {
  const std::string& metric = ctx.searcher().metric_name();
  bool known = false;
  std::string names;
  for (const char* name : svm::kValidationMetrics) {
    known |= metric == name;
    names += std::string(names.empty() ? "" : ", ") + name;
  }
  if (!known)
    throw ring::trial::ConfigError("this trial reports " + names + ", not \"" + metric +
                                   "\": set searcher.metric to one of them");
  svm::Hparams h;
  try {
    h = svm::ReadHparams(ctx);
  } catch (const ring::trial::HparamError& e) {
    ctx.searcher().report_invalid_hparams(e.what());  // the searcher replaces this trial
    throw;
  }
  return svm::Train(ctx, h);
}

int Fail(int code, const char* what, const std::exception& e) {
  std::fflush(stdout);
  std::fprintf(stderr, "svm_trial: %s: %s\n", what, e.what());
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    auto ctx = ring::trial::Context::from_environment(argc, argv);
    return Run(ctx);
  } catch (const ring::trial::AllocationEndedError& e) {
    return Fail(5, "stopping", e);
  } catch (const ring::trial::MasterUnreachableError& e) {
    return Fail(5, "stopping", e);
  } catch (const ring::trial::CheckpointError& e) {
    return Fail(4, "error", e);
  } catch (const ring::trial::CollectiveError& e) {
    return Fail(6, "error", e);
  } catch (const ring::trial::RendezvousError& e) {
    return Fail(6, "error", e);
  } catch (const ring::trial::TrialError& e) {
    return Fail(2, "error", e);
  } catch (const std::exception& e) {
    return Fail(4, "error", e);
  }
}
