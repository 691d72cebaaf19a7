#include "trial_state.h"

#include <cmath>
#include <sstream>
#include <type_traits>

#include "digits_data.h"

namespace svm {
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
  h.lr_decay = ctx.hparam<double>("lr_decay", h.lr_decay);
  h.regularization = ctx.hparam<double>("regularization", h.regularization);
  const std::string multiclass = ctx.hparam<std::string>("multiclass", MulticlassName(h.multiclass));
  h.batch_size = ctx.hparam<int64_t>("batch_size", h.batch_size);
  h.report_every = ctx.hparam<int64_t>("report_every", h.report_every);
  h.validate_every = ctx.hparam<int64_t>("validate_every", h.validate_every);
  h.checkpoint_every = ctx.hparam<int64_t>("checkpoint_every", h.checkpoint_every);
  h.validation_size = ctx.hparam<int64_t>("validation_size", h.validation_size);
  h.split_seed = ctx.hparam<uint64_t>("split_seed", h.split_seed);
  if (ctx.has_hparam("data_path")) h.data_path = ctx.hparam<std::string>("data_path");
  h.batch_sleep_ms = ctx.hparam<int64_t>("batch_sleep_ms", h.batch_sleep_ms);

  Require(std::isfinite(h.learning_rate) && h.learning_rate > 0 && h.learning_rate <= 100,
          "learning_rate must be in (0, 100], got " + Num(h.learning_rate));
  Require(std::isfinite(h.lr_decay) && h.lr_decay >= 0,
          "lr_decay must be a non-negative number, got " + Num(h.lr_decay));
  Require(std::isfinite(h.regularization) && h.regularization >= 0,
          "regularization must be a non-negative number, got " + Num(h.regularization));
  Require(ParseMulticlass(multiclass, &h.multiclass),
          "multiclass must be \"one_vs_rest\" or \"crammer_singer\", got \"" + multiclass + "\"");
  Require(h.batch_size >= 1 && h.batch_size <= 1024,
          "batch_size (records per rank per step) must be between 1 and 1024, got " +
              std::to_string(h.batch_size));
  Require(h.report_every >= 1, "report_every must be at least 1, got " + std::to_string(h.report_every));
  Require(h.validate_every >= 0,
          "validate_every must not be negative, got " + std::to_string(h.validate_every));
  Require(h.checkpoint_every >= 0,
          "checkpoint_every must not be negative, got " + std::to_string(h.checkpoint_every));
  Require(h.validation_size >= 1 && h.validation_size < static_cast<int64_t>(digits::kRecords),
          "validation_size must be between 1 and " + std::to_string(digits::kRecords - 1) + ", got " +
              std::to_string(h.validation_size));
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

}  // namespace svm
