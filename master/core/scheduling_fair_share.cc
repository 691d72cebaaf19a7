#include "master/core/scheduling_fair_share.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <queue>
#include <set>
#include <tuple>

#include "master/core/scheduling_pass.h"
#include "master/core/scheduling_reasons.h"

namespace ring::scheduling {
namespace {

constexpr double kEpsilon = 1e-9;
constexpr double kMinWeight = 1e-3;  // a non-positive weight still gets a sliver

// The order experiments take turns in: the smallest fraction of its share
// used first, then the earliest next request, then the experiment id.
using Turn = std::tuple<double, int64_t, int64_t, int>;  // (used/share, next seq, experiment, index)

}  // namespace

std::map<int64_t, double> FairShares(const std::vector<ExperimentDemand>& demands, int capacity) {
  std::vector<ExperimentDemand> sorted = demands;
  for (auto& d : sorted) d.weight = std::max(d.weight, kMinWeight);
  std::sort(sorted.begin(), sorted.end(), [](const ExperimentDemand& a, const ExperimentDemand& b) {
    const double x = a.demand / a.weight;
    const double y = b.demand / b.weight;
    return x != y ? x < y : a.experiment_id < b.experiment_id;
  });
  double weights = 0;
  for (const auto& d : sorted) weights += d.weight;
  double remaining = std::max(capacity, 0);
  std::map<int64_t, double> shares;
  for (size_t i = 0; i < sorted.size(); ++i) {
    const auto& d = sorted[i];
    if (d.demand <= remaining * d.weight / weights) {
      shares[d.experiment_id] = d.demand;
      remaining -= d.demand;
      weights -= d.weight;
      continue;
    }
    // Everyone from here on wants more than its proportion of what is left.
    for (size_t j = i; j < sorted.size(); ++j)
      shares[sorted[j].experiment_id] = remaining * sorted[j].weight / weights;
    break;
  }
  return shares;
}

std::vector<ExperimentDemand> Demands(const PoolInput& input) {
  struct Acc {
    double weight = 0;
    std::optional<int> max_slots;
    int demand = 0;
  };
  std::map<int64_t, Acc> acc;
  auto note = [&](int64_t e, double weight, const std::optional<int>& max_slots) -> Acc& {
    auto& a = acc[e];
    a.weight = std::max(a.weight, weight);
    if (max_slots) a.max_slots = a.max_slots ? std::min(*a.max_slots, *max_slots) : *max_slots;
    return a;
  };
  for (const auto& r : input.running) {
    auto& a = note(r.experiment_id, r.weight, r.max_slots);
    if (!r.preempting) a.demand += r.slots;
  }
  std::map<int, bool> placeable;  // by size
  for (const auto& r : input.pending) {
    auto& a = note(r.experiment_id, r.weight, r.max_slots);
    auto it = placeable.find(r.slots);
    if (it == placeable.end())
      it = placeable.emplace(r.slots, r.slots > 0 && !NeverFitsIn(input.agents, r.slots, input.pool)).first;
    if (it->second) a.demand += r.slots;
  }
  std::vector<ExperimentDemand> out;
  for (const auto& [e, a] : acc) {
    const int demand = a.max_slots ? std::min(a.demand, *a.max_slots) : a.demand;
    if (demand > 0) out.push_back({e, a.weight, demand});
  }
  return out;
}

PoolDecision ScheduleFairShare(const PoolInput& input) {
  PoolPass pass(input);
  const int capacity = pass.slots().enabled_slots();
  const auto shares = FairShares(Demands(input), capacity);
  auto share_of = [&](int64_t e) {
    auto it = shares.find(e);
    return it == shares.end() ? 0.0 : it->second;
  };

  // Each experiment's requests, FIFO.
  std::map<int64_t, std::vector<int>> by_experiment;
  for (int p = 0; p < static_cast<int>(input.pending.size()); ++p)
    by_experiment[input.pending[p].experiment_id].push_back(p);
  std::vector<int64_t> experiments;
  std::vector<std::vector<int>> queues;
  for (auto& [e, q] : by_experiment) {
    std::sort(q.begin(), q.end(), [&](int x, int y) {
      const auto& a = input.pending[x];
      const auto& b = input.pending[y];
      return a.queued_seq != b.queued_seq ? a.queued_seq < b.queued_seq : a.allocation_id < b.allocation_id;
    });
    experiments.push_back(e);
    queues.push_back(std::move(q));
  }
  std::vector<size_t> next(queues.size(), 0);
  auto turn = [&](int x) {
    const int64_t e = experiments[x];
    const int used = pass.StayingSlots(e);
    const double share = share_of(e);
    const double fraction =
        used == 0 ? 0.0 : (share > kEpsilon ? used / share : std::numeric_limits<double>::infinity());
    return Turn{fraction, input.pending[queues[x][next[x]]].queued_seq, e, x};
  };
  std::priority_queue<Turn, std::vector<Turn>, std::greater<>> turns;
  for (int x = 0; x < static_cast<int>(queues.size()); ++x) turns.push(turn(x));

  // Running allocations that may be reclaimed, newest started first.
  std::vector<int> order;
  if (input.policy.preemption) {
    for (int i = 0; i < static_cast<int>(input.running.size()); ++i)
      if (input.running[i].preemptible && !input.running[i].preempting) order.push_back(i);
    std::sort(order.begin(), order.end(), [&](int x, int y) {
      const auto& a = input.running[x];
      const auto& b = input.running[y];
      return a.started_seq != b.started_seq ? a.started_seq > b.started_seq
                                            : a.allocation_id < b.allocation_id;
    });
  }
  Candidates victims(std::move(order));

  std::set<int> preemption_failed;  // sizes reclaim could not place (they stay so in this pass)
  std::set<int64_t> reserved;       // experiments whose first blocked request has held agents
  std::vector<int> beyond_share;    // requests tried again with the leftover slots
  while (!turns.empty()) {
    const int x = std::get<3>(turns.top());
    turns.pop();
    const int p = queues[x][next[x]++];
    const auto& r = input.pending[p];
    pass.Consider(p);
    if (pass.Admissible(p)) {
      const int used = pass.StayingSlots(r.experiment_id);
      const double share = share_of(r.experiment_id);
      if (used > 0 && used + r.slots > share + kEpsilon) {
        beyond_share.push_back(p);
      } else if (!pass.PlaceNow(p) && !pass.WaitForLeaving(p)) {
        bool preempted = false;
        if (input.policy.preemption && !preemption_failed.count(r.slots)) {
          std::vector<std::pair<int64_t, int>> taken;  // tentatively, in this search: (experiment, slots)
          auto admit = [&](int i) {
            const auto& v = pass.running(i);
            auto it = std::find_if(taken.begin(), taken.end(),
                                   [&](const auto& t) { return t.first == v.experiment_id; });
            if (it == taken.end()) it = taken.insert(taken.end(), {v.experiment_id, 0});
            const double above = pass.StayingSlots(v.experiment_id) - it->second - share_of(v.experiment_id);
            if (above <= kEpsilon) return VictimSearch::Verdict::kSkip;
            it->second += v.slots;
            return VictimSearch::Verdict::kTake;
          };
          preempted = pass.Preempt(p, victims, admit);
          if (!preempted) preemption_failed.insert(r.slots);
        }
        if (!preempted && reserved.insert(r.experiment_id).second) pass.HoldFor(p);
      }
    }
    if (next[x] < queues[x].size()) turns.push(turn(x));
  }

  // Work conserving: slots nobody could use within their share go to the
  // requests beyond it, by the same turns (the experiment least over its
  // share first), each experiment's in FIFO order.
  std::map<int64_t, std::vector<int>> extra;
  for (int p : beyond_share) extra[input.pending[p].experiment_id].push_back(p);
  experiments.clear();
  queues.clear();
  for (auto& [e, q] : extra) {
    experiments.push_back(e);
    queues.push_back(std::move(q));
  }
  next.assign(queues.size(), 0);
  for (int x = 0; x < static_cast<int>(queues.size()); ++x) turns.push(turn(x));
  while (!turns.empty()) {
    const int x = std::get<3>(turns.top());
    turns.pop();
    const int p = queues[x][next[x]++];
    if (pass.Admissible(p) && !pass.PlaceNow(p))
      pass.SetReason(p, AtShareReason(share_of(input.pending[p].experiment_id), capacity));
    if (next[x] < queues[x].size()) turns.push(turn(x));
  }
  return pass.Finish(false);
}

}  // namespace ring::scheduling
