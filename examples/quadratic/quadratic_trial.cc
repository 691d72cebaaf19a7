// quadratic_trial: the dependency-free example trial. Trains a synthetic
// linear regression with minibatch SGD for max_length_batches batches,
// reporting training loss every `report_every` batches and validation loss
// every kValidateEveryReports reports and at the end.
//
// Exit codes: 0 trained, 2 bad hyperparameters or environment, 3 diverged.
#include <cmath>
#include <cstdio>
#include <string>

#include "linear_regression.h"
#include "ring/trial/trial.h"

namespace {

constexpr int64_t kValidateEveryReports = 4;
constexpr size_t kTrainSize = 2048;

struct Hparams {
  double learning_rate = 0;
  int64_t batch_size = 0;
  int64_t report_every = 0;
  double momentum = 0;
};

// Reads and checks the hyperparameters; throws HparamError with what to fix.
Hparams ReadHparams(const ring::trial::Context& ctx) {
  using ring::trial::HparamError;
  Hparams h;
  h.learning_rate = ctx.hparam<double>("learning_rate");
  h.batch_size = ctx.hparam<int64_t>("batch_size");
  h.report_every = ctx.hparam<int64_t>("report_every");
  h.momentum = ctx.hparam<double>("momentum", 0.0);
  if (!(h.learning_rate > 0) || !std::isfinite(h.learning_rate))
    throw HparamError("learning_rate must be a positive number, got " + std::to_string(h.learning_rate));
  if (h.batch_size < 1 || h.batch_size > static_cast<int64_t>(kTrainSize))
    throw HparamError("batch_size must be between 1 and " + std::to_string(kTrainSize) + ", got " +
                      std::to_string(h.batch_size));
  if (h.report_every < 1)
    throw HparamError("report_every must be at least 1, got " + std::to_string(h.report_every));
  if (!(h.momentum >= 0 && h.momentum < 1))
    throw HparamError("momentum must be in [0, 1), got " + std::to_string(h.momentum));
  return h;
}

int Train(ring::trial::Context& ctx) {
  const Hparams h = ReadHparams(ctx);
  const int64_t total = ctx.max_length_batches();
  const quadratic::Problem problem = quadratic::MakeProblem(ctx.seed(), kTrainSize);
  quadratic::LinearRegression model(
      problem.train, {h.learning_rate, static_cast<size_t>(h.batch_size), h.momentum}, ctx.seed());
  std::printf(
      "quadratic: trial %lld, seed %llu, %lld batches, learning_rate %g, batch_size %lld, momentum %g\n",
      static_cast<long long>(ctx.trial_id()), static_cast<unsigned long long>(ctx.seed()),
      static_cast<long long>(total), h.learning_rate, static_cast<long long>(h.batch_size), h.momentum);

  double loss_sum = 0;
  int64_t loss_count = 0;
  int64_t reports = 0;
  int64_t validated_at = -1;
  auto validate = [&](int64_t batches) {
    double v = model.MeanSquaredError(problem.validation);
    std::printf("quadratic: batch %lld/%lld validation_loss %.6f\n", static_cast<long long>(batches),
                static_cast<long long>(total), v);
    ctx.report_validation_metrics(batches, {{"validation_loss", v}});
    validated_at = batches;
  };

  for (int64_t batch = 1; batch <= total; ++batch) {
    double loss = model.TrainBatch();
    if (!std::isfinite(loss) || loss > 1e12) {
      std::fprintf(stderr,
                   "quadratic_trial: error: training diverged at batch %lld (loss %g); lower learning_rate\n",
                   static_cast<long long>(batch), loss);
      std::fflush(stdout);
      return 3;
    }
    loss_sum += loss;
    ++loss_count;
    if (batch % h.report_every == 0 || batch == total) {
      double mean = loss_sum / static_cast<double>(loss_count);
      std::printf("quadratic: batch %lld/%lld loss %.6f\n", static_cast<long long>(batch),
                  static_cast<long long>(total), mean);
      ctx.report_training_metrics(batch, {{"loss", mean}});
      loss_sum = 0;
      loss_count = 0;
      if (++reports % kValidateEveryReports == 0) validate(batch);
    }
  }
  if (validated_at != total) validate(total);
  std::fflush(stdout);
  if (!ctx.flush()) {
    std::fprintf(stderr,
                 "quadratic_trial: warning: not every metric report was acknowledged by the master\n");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    auto ctx = ring::trial::Context::from_environment(argc, argv);
    return Train(ctx);
  } catch (const ring::trial::TrialError& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "quadratic_trial: error: %s\n", e.what());
    return 2;
  }
}
