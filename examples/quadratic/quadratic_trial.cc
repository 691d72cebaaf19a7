// quadratic_trial: the dependency-free example trial. Trains a synthetic
// linear regression with minibatch SGD for max_length_batches batches,
// reporting training loss every `report_every` batches and validation loss
// every kValidateEveryReports reports and at the end. Checkpoints its whole
// state every `checkpoint_every` batches (and when min_checkpoint_period is
// due), resumes from the latest checkpoint bit for bit, and checkpoints and
// exits 0 when the platform asks it to stop (pause, preemption).
//
// Exit codes: 0 trained (or stopped when asked, after checkpointing), 2 bad
// hyperparameters or environment, 3 diverged, 4 other errors (e.g. a
// corrupted checkpoint), 5 the master ended this allocation or stayed
// unreachable (the platform restarts the trial from its latest checkpoint).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

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
  int64_t checkpoint_every = 100;  // 0: only when min_checkpoint_period is due, and at the end
  int64_t batch_sleep_ms = 0;      // slows training down (demos, fault tests); no effect on results
};

// The training loop's own state between batches, saved beside the model's.
struct LoopState {
  int64_t batch = 0;  // batches done
  double loss_sum = 0;
  int64_t loss_count = 0;
  int64_t reports = 0;
  int64_t validated_at = -1;
};

uint64_t Bits(double d) {
  uint64_t u;
  std::memcpy(&u, &d, sizeof u);
  return u;
}

double FromBits(uint64_t u) {
  double d;
  std::memcpy(&d, &u, sizeof d);
  return d;
}

std::string ReadAll(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFile(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
  out.close();
  if (!out) throw ring::trial::CheckpointError("cannot write " + path.string());
}

// model.bin: the model's state (binary, little-endian). loop.txt: the loop's,
// integers only (the loss sum as its IEEE-754 bits), so both are exact and a
// state gives the same bytes every time.
void SaveCheckpoint(ring::trial::Context& ctx, const quadratic::LinearRegression& model,
                    const LoopState& loop) {
  ctx.checkpoints().save(loop.batch, [&](const std::filesystem::path& dir) {
    WriteFile(dir / "model.bin", model.SaveState());
    std::ostringstream text;
    text << loop.batch << ' ' << Bits(loop.loss_sum) << ' ' << loop.loss_count << ' ' << loop.reports << ' '
         << loop.validated_at << '\n';
    WriteFile(dir / "loop.txt", text.str());
  });
}

void RestoreCheckpoint(const ring::trial::CheckpointInfo& info, quadratic::LinearRegression& model,
                       LoopState& loop) {
  model.LoadState(ReadAll(info.path / "model.bin"));
  std::istringstream in(ReadAll(info.path / "loop.txt"));
  uint64_t loss_bits = 0;
  if (!(in >> loop.batch >> loss_bits >> loop.loss_count >> loop.reports >> loop.validated_at))
    throw ring::trial::CheckpointError("checkpoint " + info.uuid + ": loop.txt is malformed");
  if (loop.batch != info.batches)
    throw ring::trial::CheckpointError("checkpoint " + info.uuid + " is registered at " +
                                       std::to_string(info.batches) + " batches but holds batch " +
                                       std::to_string(loop.batch));
  loop.loss_sum = FromBits(loss_bits);
}

// Reads and checks the hyperparameters; throws HparamError with what to fix.
Hparams ReadHparams(const ring::trial::Context& ctx) {
  using ring::trial::HparamError;
  Hparams h;
  h.learning_rate = ctx.hparam<double>("learning_rate");
  h.batch_size = ctx.hparam<int64_t>("batch_size");
  h.report_every = ctx.hparam<int64_t>("report_every");
  h.momentum = ctx.hparam<double>("momentum", 0.0);
  h.checkpoint_every = ctx.hparam<int64_t>("checkpoint_every", h.checkpoint_every);
  h.batch_sleep_ms = ctx.hparam<int64_t>("batch_sleep_ms", 0);
  if (h.checkpoint_every < 0)
    throw HparamError("checkpoint_every must not be negative, got " + std::to_string(h.checkpoint_every));
  if (h.batch_sleep_ms < 0 || h.batch_sleep_ms > 60000)
    throw HparamError("batch_sleep_ms must be between 0 and 60000, got " + std::to_string(h.batch_sleep_ms));
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

  LoopState loop;
  if (auto latest = ctx.checkpoints().latest_verified()) {
    RestoreCheckpoint(*latest, model, loop);
    std::printf("quadratic: resumed from checkpoint %s at batch %lld\n", latest->uuid.c_str(),
                static_cast<long long>(loop.batch));
  }
  auto validate = [&](int64_t batches) {
    double v = model.MeanSquaredError(problem.validation);
    std::printf("quadratic: batch %lld/%lld validation_loss %.6f\n", static_cast<long long>(batches),
                static_cast<long long>(total), v);
    ctx.report_validation_metrics(batches, {{"validation_loss", v}});
    loop.validated_at = batches;
  };

  while (loop.batch < total) {
    const int64_t batch = ++loop.batch;
    double loss = model.TrainBatch();
    if (h.batch_sleep_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(h.batch_sleep_ms));
    if (!std::isfinite(loss) || loss > 1e12) {
      std::fprintf(stderr,
                   "quadratic_trial: error: training diverged at batch %lld (loss %g); lower learning_rate\n",
                   static_cast<long long>(batch), loss);
      std::fflush(stdout);
      return 3;
    }
    loop.loss_sum += loss;
    ++loop.loss_count;
    if (batch % h.report_every == 0 || batch == total) {
      double mean = loop.loss_sum / static_cast<double>(loop.loss_count);
      std::printf("quadratic: batch %lld/%lld loss %.6f\n", static_cast<long long>(batch),
                  static_cast<long long>(total), mean);
      ctx.report_training_metrics(batch, {{"loss", mean}});
      loop.loss_sum = 0;
      loop.loss_count = 0;
      if (++loop.reports % kValidateEveryReports == 0) validate(batch);
    }
    if (batch == total && loop.validated_at != total) validate(total);
    const bool stop = ctx.preempt().should_preempt();
    // The final state is kept under a master; locally only when asked for.
    const bool final_save = batch == total && (!ctx.is_local() || h.checkpoint_every > 0);
    if (final_save || stop || ctx.checkpoints().due(batch) ||
        (h.checkpoint_every > 0 && batch % h.checkpoint_every == 0))
      SaveCheckpoint(ctx, model, loop);
    if (stop && batch < total) {
      std::printf("quadratic: asked to stop; checkpointed at batch %lld\n", static_cast<long long>(batch));
      std::fflush(stdout);
      ctx.flush();
      ctx.preempt().acknowledge();
      return 0;
    }
  }
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
