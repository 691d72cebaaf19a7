#include "trial_state.h"

#include <bit>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace quadratic {
namespace {

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

}  // namespace

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

void SaveCheckpoint(ring::trial::Context& ctx, const LinearRegression& model, const LoopState& loop) {
  ctx.checkpoints().save(loop.batch, [&](const std::filesystem::path& dir) {
    WriteFile(dir / "model.bin", model.SaveState());
    std::ostringstream text;
    text << loop.batch << ' ' << std::bit_cast<uint64_t>(loop.loss_sum) << ' ' << loop.loss_count << ' '
         << loop.reports << ' ' << loop.validated_at << '\n';
    WriteFile(dir / "loop.txt", text.str());
  });
}

void RestoreCheckpoint(const ring::trial::CheckpointInfo& info, LinearRegression& model, LoopState& loop) {
  model.LoadState(ReadAll(info.path / "model.bin"));
  std::istringstream in(ReadAll(info.path / "loop.txt"));
  uint64_t loss_bits = 0;
  if (!(in >> loop.batch >> loss_bits >> loop.loss_count >> loop.reports >> loop.validated_at))
    throw ring::trial::CheckpointError("checkpoint " + info.uuid + ": loop.txt is malformed");
  if (loop.batch != info.batches)
    throw ring::trial::CheckpointError("checkpoint " + info.uuid + " is registered at " +
                                       std::to_string(info.batches) + " batches but holds batch " +
                                       std::to_string(loop.batch));
  loop.loss_sum = std::bit_cast<double>(loss_bits);
}

}  // namespace quadratic
