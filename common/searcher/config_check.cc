#include "common/searcher/config_check.h"

#include <cmath>

#include "common/searcher/asha_plan.h"
#include "common/searcher/hparam_grid.h"
#include "common/searcher/searcher.h"

namespace ring::search {
namespace {

using Type = Hyperparameter::Type;

Status Invalid(const std::string& message) {
  return {ErrorCode::kInvalidConfig, message};
}

std::string Num(double v) {
  return nlohmann::json(v).dump();
}

// The space must be one the samplers and the grid can use without tripping.
Status CheckSpace(const std::map<std::string, Hyperparameter>& space, const std::string& prefix, bool grid) {
  for (const auto& [name, h] : space) {
    const std::string path = prefix + "." + name;
    switch (h.type) {
      case Type::kConst:
        break;
      case Type::kCategorical:
        if (h.vals.empty()) return Invalid(path + ".vals must not be empty");
        break;
      case Type::kInt:
      case Type::kDouble:
      case Type::kLog:
        if (!std::isfinite(h.minval) || !std::isfinite(h.maxval) || h.minval > h.maxval)
          return Invalid(path + ".maxval must be at least minval (" + Num(h.minval) + "), got " +
                         Num(h.maxval));
        if (h.type == Type::kInt && (std::abs(h.minval) > 9.0e18 || std::abs(h.maxval) > 9.0e18))
          return Invalid(path + " bounds must fit in a 64-bit integer");
        if (h.type == Type::kLog && (!(h.base > 0) || h.base == 1 || !std::isfinite(h.base)))
          return Invalid(path + ".base must be positive and not 1, got " + Num(h.base));
        // Draws and grid points must be finite numbers: JSON has no infinity.
        if (!std::isfinite(h.maxval - h.minval))
          return Invalid(path + " spans a range too wide for a double (" + Num(h.minval) + " to " +
                         Num(h.maxval) + ")");
        if (h.type == Type::kLog &&
            (!std::isfinite(std::pow(h.base, h.minval)) || !std::isfinite(std::pow(h.base, h.maxval))))
          return Invalid(path + ": base ^ maxval (or ^ minval) is too large for a double");
        if (h.count && *h.count < 1)
          return Invalid(path + ".count must be a positive integer, got " + std::to_string(*h.count));
        if (grid && !h.count) return Invalid(path + ".count is required by the grid searcher");
        break;
      case Type::kNested:
        if (Status s = CheckSpace(h.nested, path, grid); !s.ok()) return s;
        break;
    }
  }
  return Status::Ok();
}

}  // namespace

Status CheckSearcherConfig(const SearcherConfig& c, const std::map<std::string, Hyperparameter>& space) {
  const std::string& name = c.name;
  if (name != "single" && name != "grid" && name != "random" && name != "adaptive_asha")
    return Invalid("searcher.name must be one of single, grid, random, adaptive_asha, got \"" + name + "\"");
  const bool trial_driven = ContractOf(c) == SearcherContract::kTrialDriven;
  if (c.time_metric && (c.time_metric->empty() || c.max_time < 1))
    return Invalid("searcher.max_time must be a positive integer with searcher.time_metric, got " +
                   std::to_string(c.max_time));
  if (trial_driven && name == "adaptive_asha" && !c.time_metric && c.max_length)
    return Invalid(std::string("searcher.max_length in ") + ToString(c.max_length->unit) +
                   " cannot be counted in batches: adaptive_asha needs records_per_epoch (for epochs) and a "
                   "constant hyperparameters.global_batch_size");
  if (trial_driven && name == "adaptive_asha" && !c.time_metric)
    return Invalid(
        "searcher.time_metric and searcher.max_time are required by adaptive_asha without "
        "searcher.max_length");
  if (!trial_driven && c.max_length_batches < 1)
    return Invalid("searcher.max_length.batches must be a positive integer, got " +
                   std::to_string(c.max_length_batches));
  if (c.max_concurrent_trials < 0)
    return Invalid("searcher.max_concurrent_trials must be an integer >= 0, got " +
                   std::to_string(c.max_concurrent_trials));
  if (name == "random" || name == "adaptive_asha") {
    if (c.max_trials < 1)
      return Invalid("searcher.max_trials must be a positive integer, got " + std::to_string(c.max_trials));
    if (c.max_trials > kMaxTrials)
      return Invalid("searcher.max_trials must be at most " + std::to_string(kMaxTrials) + ", got " +
                     std::to_string(c.max_trials));
  }
  if (name == "adaptive_asha") {
    if (c.mode != "aggressive" && c.mode != "standard" && c.mode != "conservative")
      return Invalid("searcher.mode must be one of aggressive, standard, conservative, got \"" + c.mode +
                     "\"");
    if (!(c.divisor > 1) || !std::isfinite(c.divisor))
      return Invalid("searcher.divisor must be greater than 1, got " + Num(c.divisor));
    if (c.max_rungs < 1)
      return Invalid("searcher.max_rungs must be a positive integer, got " + std::to_string(c.max_rungs));
    if (c.bracket_rungs.empty() && AshaRungs(c) > kMaxAshaRungs)
      return Invalid("searcher.max_rungs: divisor " + Num(c.divisor) + " gives more than " +
                     std::to_string(kMaxAshaRungs) + " rungs; raise the divisor or lower max_rungs");
    for (size_t i = 0; i < c.bracket_rungs.size(); ++i)
      if (Status s = CheckBracketRungs(c.bracket_rungs[i], c.max_rungs); !s.ok())
        return Invalid("searcher.bracket_rungs[" + std::to_string(i) + "] " + s.message());
  }
  const bool grid = name == "grid";
  if (Status s = CheckSpace(space, "hyperparameters", grid); !s.ok()) return s;
  if (grid) {
    const int64_t points = GridSize(space);
    if (points > kMaxGridPoints)
      return Invalid("hyperparameters: the grid has more than " + std::to_string(kMaxGridPoints) +
                     " points; lower the counts or use the random searcher");
  }
  return Status::Ok();
}

}  // namespace ring::search
