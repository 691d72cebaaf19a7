// quadratic_trial: the dependency-free example trial. Trains a synthetic
// linear regression with minibatch SGD through the searcher's operations:
// for each one it trains until the operation's length, validates there,
// checkpoints and reports the validation loss as the searcher metric. On the
// way it reports training loss every `report_every` batches (and at the end
// of an operation) and validation loss every kValidateEveryReports reports
// and whenever min_validation_period is due. Checkpoints its whole state every
// `checkpoint_every` batches, when min_checkpoint_period is due, at the end of
// every operation and when asked to stop, and resumes from the latest
// checkpoint bit for bit. When the searcher has nothing more for it (closed,
// or waiting to promote it later) it exits 0 with its state checkpointed; when
// the platform asks it to stop (pause, preemption) it checkpoints, acknowledges
// and exits 0.
//
// Exit codes: 0 trained (or stopped when asked, after checkpointing), 2 bad
// hyperparameters (reported to the searcher) or environment, 3 diverged,
// 4 other errors (e.g. a corrupted checkpoint), 5 the master ended this
// allocation or stayed unreachable (the platform restarts the trial from its
// latest checkpoint).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include "linear_regression.h"
#include "ring/trial/trial.h"
#include "trial_state.h"

namespace {

using quadratic::Hparams;
using quadratic::LoopState;

constexpr int64_t kValidateEveryReports = 4;
constexpr const char* kMetric = "validation_loss";

// One trial process's training: owns the model and the loop's state; runs on
// the main thread.
class QuadraticTrial {
 public:
  QuadraticTrial(ring::trial::Context& ctx, const Hparams& h)
      : ctx_(ctx),
        h_(h),
        problem_(quadratic::MakeProblem(ctx.seed(), quadratic::kTrainSize)),
        model_(problem_.train, {h.learning_rate, static_cast<size_t>(h.batch_size), h.momentum}, ctx.seed()) {
  }

  // The process's exit code.
  int Run() {
    std::printf(
        "quadratic: trial %lld, seed %llu, %lld batches, learning_rate %g, batch_size %lld, momentum %g\n",
        static_cast<long long>(ctx_.trial_id()), static_cast<unsigned long long>(ctx_.seed()),
        static_cast<long long>(ctx_.max_length_batches()), h_.learning_rate,
        static_cast<long long>(h_.batch_size), h_.momentum);
    if (auto latest = ctx_.checkpoints().latest_verified()) {
      quadratic::RestoreCheckpoint(*latest, model_, loop_);
      saved_at_ = loop_.batch;
      std::printf("quadratic: resumed from checkpoint %s at batch %lld\n", latest->uuid.c_str(),
                  static_cast<long long>(loop_.batch));
    }
    bool first = true;
    for (auto& op : ctx_.searcher().operations()) {
      const int64_t length = op.length();
      if (length < loop_.batch)
        throw std::runtime_error("the searcher asked for training to " + std::to_string(length) +
                                 " batches, but this trial has already trained " +
                                 std::to_string(loop_.batch));
      // A stop asked for while the last operation ended: do not start the next one.
      if (!first && loop_.batch < length && ctx_.preempt().should_preempt()) return Stop();
      first = false;
      if (int code = TrainTo(length); code >= 0) return code;
      // Resumed exactly at the end of an operation not completed yet: its
      // validation again (the same value), without training.
      if (!validation_ || validation_->first != length) Validate(length);
      if (saved_at_ != loop_.batch && KeepsFinalState()) Save();
      op.report_completed(validation_->second);
    }
    // Nothing more for now: a trial promoted later restarts from this state.
    if (saved_at_ != loop_.batch && KeepsFinalState()) Save();
    std::fflush(stdout);
    if (!ctx_.flush())
      std::fprintf(stderr,
                   "quadratic_trial: warning: not every metric report was acknowledged by the master\n");
    return 0;
  }

 private:
  // Trains until `length` batches; -1 when there, else the exit code (stopped, diverged).
  int TrainTo(int64_t length) {
    while (loop_.batch < length) {
      const int64_t batch = ++loop_.batch;
      const double loss = model_.TrainBatch();
      if (h_.batch_sleep_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(h_.batch_sleep_ms));
      if (!std::isfinite(loss) || loss > 1e12) {
        std::fprintf(
            stderr,
            "quadratic_trial: error: training diverged at batch %lld (loss %g); lower learning_rate\n",
            static_cast<long long>(batch), loss);
        std::fflush(stdout);
        return 3;
      }
      loop_.loss_sum += loss;
      ++loop_.loss_count;
      if (batch % h_.report_every == 0 || batch == length) {
        const double mean = loop_.loss_sum / static_cast<double>(loop_.loss_count);
        std::printf("quadratic: batch %lld/%lld loss %.6f\n", static_cast<long long>(batch),
                    static_cast<long long>(length), mean);
        ctx_.report_training_metrics(batch, {{"loss", mean}});
        loop_.loss_sum = 0;
        loop_.loss_count = 0;
        if (++loop_.reports % kValidateEveryReports == 0) Validate(batch);
      }
      if (loop_.validated_at != batch && (batch == length || ctx_.validation_due(batch))) Validate(batch);
      const bool stop = ctx_.preempt().should_preempt();
      if (stop || ctx_.checkpoints().due(batch) ||
          (h_.checkpoint_every > 0 && batch % h_.checkpoint_every == 0))
        Save();
      if (stop && batch < length) return Stop();
    }
    return -1;
  }

  double Validate(int64_t batches) {
    const double v = model_.MeanSquaredError(problem_.validation);
    std::printf("quadratic: batch %lld validation_loss %.6f\n", static_cast<long long>(batches), v);
    ctx_.report_validation_metrics(batches, {{kMetric, v}});
    loop_.validated_at = batches;
    validation_ = {batches, v};
    return v;
  }

  void Save() {
    quadratic::SaveCheckpoint(ctx_, model_, loop_);
    saved_at_ = loop_.batch;
  }

  // The end of an operation is always checkpointed under a master (a promoted
  // or restarted trial resumes there); locally only when checkpoints are on.
  bool KeepsFinalState() const { return !ctx_.is_local() || h_.checkpoint_every > 0; }

  // Asked to stop (pause, preemption): checkpoint, acknowledge, exit 0.
  int Stop() {
    if (saved_at_ != loop_.batch) Save();
    std::printf("quadratic: asked to stop; checkpointed at batch %lld\n",
                static_cast<long long>(loop_.batch));
    std::fflush(stdout);
    ctx_.flush();
    ctx_.preempt().acknowledge();
    return 0;
  }

  ring::trial::Context& ctx_;
  const Hparams h_;
  const quadratic::Problem problem_;
  quadratic::LinearRegression model_;
  LoopState loop_;
  int64_t saved_at_ = -1;                                 // batches of the checkpoint saved or resumed from
  std::optional<std::pair<int64_t, double>> validation_;  // the last validation of this process
};

int Train(ring::trial::Context& ctx) {
  if (ctx.searcher().metric_name() != kMetric)
    throw ring::trial::ConfigError("this trial reports " + std::string(kMetric) + ", not \"" +
                                   ctx.searcher().metric_name() + "\": set searcher.metric: " + kMetric);
  Hparams h;
  try {
    h = quadratic::ReadHparams(ctx);
  } catch (const ring::trial::HparamError& e) {
    ctx.searcher().report_invalid_hparams(e.what());  // the searcher replaces this trial
    throw;
  }
  QuadraticTrial trial(ctx, h);
  return trial.Run();
}

}  // namespace

int main(int argc, char** argv) {
  try {
    auto ctx = ring::trial::Context::from_environment(argc, argv);
    return Train(ctx);
  } catch (const ring::trial::AllocationEndedError& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "quadratic_trial: stopping: %s\n", e.what());
    return 5;
  } catch (const ring::trial::MasterUnreachableError& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "quadratic_trial: stopping: %s\n", e.what());
    return 5;
  } catch (const ring::trial::CheckpointError& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "quadratic_trial: error: %s\n", e.what());
    return 4;
  } catch (const ring::trial::TrialError& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "quadratic_trial: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "quadratic_trial: error: %s\n", e.what());
    return 4;
  }
}
