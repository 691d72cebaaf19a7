#include "common/searcher/asha_plan.h"

#include "common/searcher/searcher.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

namespace ring::search {
namespace {

// The largest k <= limit with d^k <= x (d > 1, x >= 1).
int FloorLog(double x, double d, int limit) {
  int k = 0;
  double p = 1;
  while (k < limit && p * d <= x) {
    p *= d;
    ++k;
  }
  return k;
}

double Power(double d, int k) {
  double p = 1;
  for (int i = 0; i < k; ++i) p *= d;
  return p;
}

// The rungs of each bracket: searcher.bracket_rungs when given (Determined
// then ignores mode and max_rungs), else the list mode derives from R.
std::vector<int> BracketRungs(const SearcherConfig& c) {
  std::vector<int> out;
  for (const int64_t r : c.bracket_rungs) out.push_back(static_cast<int>(r));
  if (out.empty()) {
    const int r = AshaRungs(c);
    const int fewest = c.mode == "aggressive" ? r : c.mode == "conservative" ? 1 : (r - 1) / 2 + 1;
    for (int i = fewest; i <= r; ++i) out.push_back(i);
  }
  std::sort(out.begin(), out.end(), std::greater<>());
  return out;
}

// Each bracket's weight d^(r-1)/r. Explicit bracket_rungs can make d^(r-1)
// overflow a double; the weights are then taken relative to the largest
// (the same shares, without infinities).
std::vector<double> BracketWeights(const std::vector<int>& rungs, double d) {
  std::vector<double> weight;
  for (const int r : rungs) weight.push_back(Power(d, r - 1) / r);
  for (const double w : weight)
    if (!std::isfinite(w)) {
      for (size_t i = 0; i < rungs.size(); ++i)
        weight[i] = std::pow(d, rungs[i] - rungs.front()) / rungs[i];  // rungs.front() is the largest
      break;
    }
  return weight;
}

// Records or epochs that can be counted in batches (the bare conditions of
// InUnit).
bool Countable(const SearcherConfig& c) {
  return c.records_per_unit > 0 && c.global_batch_size > 0 && c.max_length &&
         ContractOf(c) == SearcherContract::kOperations;
}

int64_t Count(const SearcherConfig& c, int64_t length) {
  return (length * c.records_per_unit + c.global_batch_size - 1) / c.global_batch_size;
}

int RungLimit(const SearcherConfig& c) {
  return static_cast<int>(std::min<int64_t>(c.max_rungs, kMaxAshaRungs + 1));
}

// Whether ASHA's rungs in the unit stay distinct in batches (a few records
// can round to the same batch): rung lengths are floor(V / d^j), j < R (or
// below the most rungs of searcher.bracket_rungs).
bool RungsStayApart(const SearcherConfig& c) {
  if (c.name != "adaptive_asha") return true;
  const int64_t v = c.max_length->value;
  int rungs = FloorLog(static_cast<double>(v), c.divisor, RungLimit(c)) + 1;
  for (const int64_t r : c.bracket_rungs)
    rungs = std::max(rungs, static_cast<int>(r));  // their deepest rung too
  int64_t previous_unit = 0, previous_batches = 0;
  for (int j = rungs - 1; j >= 0; --j) {
    const auto unit = std::clamp<int64_t>(static_cast<int64_t>(std::floor(v / Power(c.divisor, j))), 1, v);
    const int64_t batches = Count(c, unit);
    if (unit > previous_unit && batches <= previous_batches) return false;
    previous_unit = unit;
    previous_batches = batches;
  }
  return true;
}

// The length rungs are planned in: max_length in its own unit when that is
// records or epochs (Determined plans rungs in the config's unit), else
// PlannedLength (batches, or the time metric's units).
int64_t UnitPlanned(const SearcherConfig& c) {
  return InUnit(c) ? c.max_length->value : PlannedLength(c);
}

}  // namespace

Status CheckBracketRungs(int64_t rungs, int64_t max_rungs) {
  if (rungs < 1) return InvalidArgument("must be a positive number of rungs, got " + std::to_string(rungs));
  if (rungs > max_rungs)
    return InvalidArgument("is " + std::to_string(rungs) + " rungs, more than searcher.max_rungs (" +
                           std::to_string(max_rungs) + "); raise max_rungs or give fewer rungs");
  if (rungs > kMaxAshaRungs)
    return InvalidArgument("is " + std::to_string(rungs) + " rungs; adaptive_asha runs at most " +
                           std::to_string(kMaxAshaRungs));
  return Status::Ok();
}

bool InUnit(const SearcherConfig& c) {
  return Countable(c) && RungsStayApart(c);
}

int64_t UnitToBatches(const SearcherConfig& c, int64_t length) {
  return InUnit(c) ? Count(c, length) : length;
}

int AshaRungs(const SearcherConfig& c) {
  const int limit = RungLimit(c);
  const int by_length = FloorLog(static_cast<double>(UnitPlanned(c)), c.divisor, limit) + 1;
  const int by_trials = FloorLog(static_cast<double>(c.max_trials), c.divisor, limit) + 1;
  return std::max(1, std::min({limit, by_length, by_trials}));
}

std::vector<AshaBracketPlan> PlanAdaptiveAsha(const SearcherConfig& c) {
  const double d = c.divisor;
  const std::vector<int> rungs = BracketRungs(c);
  const size_t n = rungs.size();
  std::vector<AshaBracketPlan> plans(n);

  const std::vector<double> weight = BracketWeights(rungs, d);
  double total = 0;
  for (const double w : weight) total += w;
  int64_t allocated = 0;
  for (size_t i = 0; i < n; ++i) {
    plans[i].rungs = rungs[i];
    plans[i].max_trials =
        std::max<int64_t>(static_cast<int64_t>(weight[i] / total * static_cast<double>(c.max_trials)), 1);
    allocated += plans[i].max_trials;
  }
  plans[0].max_trials += std::max<int64_t>(c.max_trials - allocated, 0);

  int64_t each = 0;
  int64_t remainder = 0;
  if (c.max_concurrent_trials == 0) {
    each = std::max(plans[n - 1].max_trials, static_cast<int64_t>(d));
  } else {
    const int64_t concurrent = std::max<int64_t>(c.max_concurrent_trials, static_cast<int64_t>(n));
    each = concurrent / static_cast<int64_t>(n);
    remainder = concurrent % static_cast<int64_t>(n);
  }
  for (size_t i = 0; i < n; ++i)
    plans[i].max_concurrent_trials = each + (static_cast<int64_t>(i) < remainder ? 1 : 0);

  for (auto& plan : plans) {
    const int64_t max_length = UnitPlanned(c);
    for (int k = 0; k < plan.rungs; ++k) {
      int64_t length = max_length;
      if (k < plan.rungs - 1) {
        const double scaled = std::floor(static_cast<double>(max_length) / Power(d, plan.rungs - 1 - k));
        length = std::clamp<int64_t>(static_cast<int64_t>(scaled), 1, max_length);
      }
      plan.unit_lengths.push_back(length);
      plan.lengths.push_back(UnitToBatches(c, length));
    }
  }
  return plans;
}

std::vector<std::pair<int64_t, int64_t>> OperationUnitLengths(const SearcherConfig& c) {
  if (!InUnit(c)) return {};
  std::map<int64_t, int64_t> lengths{{c.max_length_batches, c.max_length->value}};
  if (c.name == "adaptive_asha")
    for (const auto& plan : PlanAdaptiveAsha(c))
      for (size_t k = 0; k < plan.lengths.size(); ++k) lengths.emplace(plan.lengths[k], plan.unit_lengths[k]);
  return {lengths.begin(), lengths.end()};
}

}  // namespace ring::search
