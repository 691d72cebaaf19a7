#include "trial_state.h"

#include <cmath>
#include <sstream>
#include <type_traits>

#include "digits_data.h"

namespace digits {
namespace {

using ring::trial::HparamError;

void Require(bool ok, const std::string& message) {
  if (!ok) throw HparamError(message);
}

std::string Num(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

}  // namespace

Hparams ReadHparams(const ring::trial::Context& ctx) {
  Hparams h;
  h.learning_rate = ctx.hparam<double>("learning_rate");
  h.batch_size = ctx.hparam<int64_t>("batch_size", h.batch_size);
  h.momentum = ctx.hparam<double>("momentum", h.momentum);
  h.weight_decay = ctx.hparam<double>("weight_decay", h.weight_decay);
  h.dropout = ctx.hparam<double>("dropout", h.dropout);
  h.report_every = ctx.hparam<int64_t>("report_every", h.report_every);
  h.validate_every = ctx.hparam<int64_t>("validate_every", h.validate_every);
  h.checkpoint_every = ctx.hparam<int64_t>("checkpoint_every", h.checkpoint_every);
  h.validation_size = ctx.hparam<int64_t>("validation_size", h.validation_size);
  h.split_seed = ctx.hparam<uint64_t>("split_seed", h.split_seed);
  if (ctx.has_hparam("data_path")) h.data_path = ctx.hparam<std::string>("data_path");
  h.threads = ctx.hparam<int64_t>("threads", h.threads);
  h.batch_sleep_ms = ctx.hparam<int64_t>("batch_sleep_ms", h.batch_sleep_ms);

  Require(std::isfinite(h.learning_rate) && h.learning_rate > 0 && h.learning_rate <= 10,
          "learning_rate must be in (0, 10], got " + Num(h.learning_rate));
  Require(h.batch_size >= 1 && h.batch_size <= 1024,
          "batch_size (records per rank per step) must be between 1 and 1024, got " +
              std::to_string(h.batch_size));
  Require(h.momentum >= 0 && h.momentum < 1, "momentum must be in [0, 1), got " + Num(h.momentum));
  Require(h.weight_decay >= 0 && std::isfinite(h.weight_decay),
          "weight_decay must be a non-negative number, got " + Num(h.weight_decay));
  Require(h.dropout >= 0 && h.dropout < 1, "dropout must be in [0, 1), got " + Num(h.dropout));
  Require(h.report_every >= 1, "report_every must be at least 1, got " + std::to_string(h.report_every));
  Require(h.validate_every >= 0,
          "validate_every must not be negative, got " + std::to_string(h.validate_every));
  Require(h.checkpoint_every >= 0,
          "checkpoint_every must not be negative, got " + std::to_string(h.checkpoint_every));
  Require(h.validation_size >= 1 && h.validation_size < static_cast<int64_t>(kRecords),
          "validation_size must be between 1 and " + std::to_string(kRecords - 1) + ", got " +
              std::to_string(h.validation_size));
  Require(h.threads >= 1 && h.threads <= 256,
          "threads must be between 1 and 256, got " + std::to_string(h.threads));
  Require(h.batch_sleep_ms >= 0 && h.batch_sleep_ms <= 60000,
          "batch_sleep_ms must be between 0 and 60000, got " + std::to_string(h.batch_sleep_ms));
  return h;
}

nlohmann::json LoopState::ToJson() const {
  return {{"batch", batch},
          {"loss_sum", loss_sum},
          {"loss_records", loss_records},
          {"validated_at", validated_at}};
}

LoopState LoopState::FromJson(const nlohmann::json& json) {
  LoopState s;
  auto field = [&](const char* name, auto& out) {
    if (!json.is_object() || !json.contains(name) || !json.at(name).is_number())
      throw ring::trial::CheckpointError(std::string("checkpoint metadata loop.") + name +
                                         " is missing or not a number: " + json.dump().substr(0, 200));
    out = json.at(name).get<std::remove_reference_t<decltype(out)>>();
  };
  field("batch", s.batch);
  field("loss_sum", s.loss_sum);
  field("loss_records", s.loss_records);
  field("validated_at", s.validated_at);
  return s;
}

}  // namespace digits
