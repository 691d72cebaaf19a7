#include "common/searcher/asha_plan.h"

#include "common/searcher/searcher.h"

#include <algorithm>
#include <cmath>
#include <functional>

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

int AshaRungs(const SearcherConfig& c) {
  const int limit = static_cast<int>(std::min<int64_t>(c.max_rungs, kMaxAshaRungs + 1));
  const int by_length = FloorLog(static_cast<double>(PlannedLength(c)), c.divisor, limit) + 1;
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
    const int64_t max_length = PlannedLength(c);
    for (int k = 0; k < plan.rungs; ++k) {
      int64_t length = max_length;
      if (k < plan.rungs - 1) {
        const double scaled = std::floor(static_cast<double>(max_length) / Power(d, plan.rungs - 1 - k));
        length = std::clamp<int64_t>(static_cast<int64_t>(scaled), 1, max_length);
      }
      plan.lengths.push_back(length);
    }
  }
  return plans;
}

}  // namespace ring::search
