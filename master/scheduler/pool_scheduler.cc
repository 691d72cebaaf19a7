#include "master/scheduler/pool_scheduler.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "master/scheduler/scheduling_fair_share.h"

namespace ring {
namespace {

using scheduling::RequestTrace;

bool SameAgent(const AgentView& a, const AgentView& b) {
  return a.id == b.id && a.pool == b.pool && a.slot_type == b.slot_type && a.free_slots == b.free_slots &&
         a.total_slots == b.total_slots && a.enabled == b.enabled &&
         a.container_runtimes == b.container_runtimes;
}

bool SameRunning(const RunningAllocation& a, const RunningAllocation& b) {
  return a.allocation_id == b.allocation_id && a.experiment_id == b.experiment_id && a.slots == b.slots &&
         a.priority == b.priority && a.weight == b.weight && a.max_slots == b.max_slots &&
         a.started_seq == b.started_seq && a.preemptible == b.preemptible && a.preempting == b.preempting &&
         a.placements == b.placements;
}

// Everything but the queued_seq, whose changes only move a request in the
// order (checked apart), and the allocation_id, equal already in every
// pair Match compares.
bool SameRequestOfId(const PendingRequest& a, const PendingRequest& b) {
  return a.experiment_id == b.experiment_id && a.slots == b.slots && a.priority == b.priority &&
         a.weight == b.weight && a.max_slots == b.max_slots && a.single_node == b.single_node &&
         a.excluded_agents == b.excluded_agents && a.container == b.container &&
         a.one_process == b.one_process;
}

template <typename T, typename Same>
bool SameAll(const std::vector<T>& a, const std::vector<T>& b, Same same) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!same(a[i], b[i])) return false;
  return true;
}

// Whether the pool's name, policy and agents are those of `kept`.
bool SameSettingsAndAgents(const PoolInput& a, const PoolInput& kept) {
  return a.pool == kept.pool && a.policy.type == kept.policy.type &&
         a.policy.preemption == kept.policy.preemption && a.policy.fit == kept.policy.fit &&
         SameAll(a.agents, kept.agents, SameAgent);
}

// PriorityOrder's order of two requests.
bool Before(const std::vector<PendingRequest>& pending, int x, int y) {
  const auto& a = pending[x];
  const auto& b = pending[y];
  if (a.priority != b.priority) return a.priority < b.priority;
  if (a.queued_seq != b.queued_seq) return a.queued_seq < b.queued_seq;
  return a.allocation_id < b.allocation_id;
}

// PriorityVictimOrder's order of two running allocations.
bool VictimBefore(const std::vector<RunningAllocation>& running, int x, int y) {
  const auto& a = running[x];
  const auto& b = running[y];
  if (a.priority != b.priority) return a.priority > b.priority;
  if (a.started_seq != b.started_seq) return a.started_seq > b.started_seq;
  return a.allocation_id < b.allocation_id;
}

bool Victim(const RunningAllocation& r) {
  return r.preemptible && !r.preempting;
}

// Whether `a` sits where `b` sat in PriorityVictimOrder.
bool SameVictimKey(const RunningAllocation& a, const RunningAllocation& b) {
  return a.allocation_id == b.allocation_id && a.priority == b.priority && a.started_seq == b.started_seq &&
         Victim(a) == Victim(b);
}

// new_of_old[k]: the index in `now` of old[k] when `same` says it is the same
// one, else -1. Both usually come in one order: walked side by side, the
// rest matched by id.
template <typename T, typename Same>
std::vector<int> MatchById(const std::vector<T>& old, const std::vector<T>& now, Same same) {
  std::vector<int> new_of_old(old.size(), -1);
  std::vector<char> matched(now.size(), 0);
  size_t k = 0;
  for (size_t i = 0; i < now.size() && k < old.size(); ++i)
    if (now[i].allocation_id == old[k].allocation_id) {
      if (same(now[i], old[k])) {
        new_of_old[k] = static_cast<int>(i);
        matched[i] = 1;
      }
      ++k;
    } else if (k + 1 < old.size() && now[i].allocation_id == old[k + 1].allocation_id) {
      // old[k] left
      if (same(now[i], old[k + 1])) {
        new_of_old[k + 1] = static_cast<int>(i);
        matched[i] = 1;
      }
      k += 2;
    }
  std::unordered_map<std::string_view, int> unmatched;
  for (size_t o = 0; o < old.size(); ++o)
    if (new_of_old[o] < 0) unmatched.emplace(old[o].allocation_id, static_cast<int>(o));
  if (unmatched.empty()) return new_of_old;
  for (size_t i = 0; i < now.size(); ++i) {
    if (matched[i]) continue;
    auto it = unmatched.find(now[i].allocation_id);
    if (it != unmatched.end() && new_of_old[it->second] < 0 && same(now[i], old[it->second]))
      new_of_old[it->second] = static_cast<int>(i);
  }
  return new_of_old;
}

bool Restricted(const PendingRequest& r) {
  return !r.excluded_agents.empty() || r.container.has_value();
}

// More arrivals than this are sorted with the rest instead of placed one by one.
constexpr size_t kMostPlaced = 256;

}  // namespace

void PoolScheduler::Reset() {
  kept_ = false;
  ids_kept_ = false;
  victims_kept_ = false;
  victims_.clear();
  order_kept_ = false;
  input_ = {};
  decision_ = {};
  order_.clear();
  by_id_.clear();
  trace_.clear();
}

void PoolScheduler::Match(const std::vector<PendingRequest>& now) {
  const auto& old = input_.pending;
  const int n = static_cast<int>(now.size());
  const int m = static_cast<int>(old.size());
  old_of_new_.assign(n, -1);
  new_of_old_.assign(m, -1);
  arrived_.clear();
  left_.clear();
  seq_moved_ = false;
  auto link = [&](int i, int k) {
    if (!SameRequestOfId(now[i], old[k])) return;  // changed: leaves and arrives
    old_of_new_[i] = k;
    new_of_old_[k] = i;
    if (now[i].queued_seq != old[k].queued_seq) seq_moved_ = true;
  };
  // Both usually come in queue order: walk them side by side, skipping a
  // few kept requests that left; the rest is matched by id below.
  int i = 0, k = 0;
  while (i < n && k < m) {
    if (now[i].allocation_id == old[k].allocation_id) {
      link(i++, k++);
      continue;
    }
    int found = -1;
    for (int d = 1; d <= 4 && k + d < m; ++d)
      if (old[k + d].allocation_id == now[i].allocation_id) {
        found = k + d;
        break;
      }
    if (found >= 0)
      k = found;
    else
      ++i;
  }
  std::vector<int> unmatched_old;
  for (int o = 0; o < m; ++o)
    if (new_of_old_[o] < 0) unmatched_old.push_back(o);
  if (!unmatched_old.empty()) {
    std::unordered_map<std::string_view, int> by_id;
    for (int o : unmatched_old) by_id.emplace(old[o].allocation_id, o);
    for (int j = 0; j < n; ++j) {
      if (old_of_new_[j] >= 0) continue;
      auto it = by_id.find(now[j].allocation_id);
      if (it != by_id.end() && new_of_old_[it->second] < 0) link(j, it->second);
    }
  }
  for (int j = 0; j < n; ++j)
    if (old_of_new_[j] < 0) arrived_.push_back(j);
  for (int o = 0; o < m; ++o)
    if (new_of_old_[o] < 0) left_.push_back(o);
}

bool PoolScheduler::CarryOrder(const std::vector<PendingRequest>& now) {
  std::vector<int> order;
  order.reserve(now.size());
  for (int o : order_)
    if (new_of_old_[o] >= 0) order.push_back(new_of_old_[o]);
  // Queued_seqs that moved keep the order when they all moved alike (the
  // queue's positions, after a request ahead left): check it.
  if (seq_moved_)
    for (size_t x = 1; x < order.size(); ++x)
      if (!Before(now, order[x - 1], order[x])) return false;
  if (arrived_.size() > kMostPlaced) return false;
  for (int j : arrived_) {
    auto at =
        std::lower_bound(order.begin(), order.end(), j, [&](int x, int y) { return Before(now, x, y); });
    if (at != order.end() && !Before(now, j, *at)) return false;  // equal keys: a repeated id
    order.insert(at, j);
  }
  order_ = std::move(order);
  return true;
}

bool PoolScheduler::CarryById(const std::vector<PendingRequest>& now) {
  std::vector<int> by_id;
  by_id.reserve(now.size());
  for (int o : by_id_)
    if (new_of_old_[o] >= 0) by_id.push_back(new_of_old_[o]);
  if (arrived_.size() > kMostPlaced) return false;
  for (int j : arrived_) {
    auto at = std::lower_bound(by_id.begin(), by_id.end(), j,
                               [&](int x, int y) { return now[x].allocation_id < now[y].allocation_id; });
    if (at != by_id.end() && now[*at].allocation_id == now[j].allocation_id) return false;  // repeated
    by_id.insert(at, j);
  }
  by_id_ = std::move(by_id);
  return true;
}

bool PoolScheduler::QueueOnly(const std::vector<PendingRequest>& now) {
  // trace_ is still by kept index; order_ already by new index.
  for (int o : left_)
    if (!trace_[o].inert()) return false;
  std::vector<int> position(now.size());
  for (int x = 0; x < static_cast<int>(order_.size()); ++x) position[order_[x]] = x;
  struct Arrival {
    int index;
    const std::string* reason;
    int capped_at;
  };
  std::vector<Arrival> arrivals;
  for (int j : arrived_) {
    const auto& r = now[j];
    if (Restricted(r)) return false;
    // The last request before it of its experiment, within its priority,
    // with no holder between them.
    int q = -1;
    for (int x = position[j] - 1; x >= 0; --x) {
      const int c = order_[x];
      const int o = old_of_new_[c];
      if (now[c].priority != r.priority || o < 0 || trace_[o].holder) return false;
      if (now[c].experiment_id == r.experiment_id) {
        q = c;
        break;
      }
    }
    if (q < 0) return false;
    const auto& twin = now[q];
    const RequestTrace& t = trace_[old_of_new_[q]];
    if (Restricted(twin) || t.assigned || twin.slots != r.slots || twin.single_node != r.single_node ||
        twin.one_process != r.one_process || twin.max_slots != r.max_slots)
      return false;
    auto reason = decision_.pending_reasons.find(twin.allocation_id);
    if (reason == decision_.pending_reasons.end()) return false;
    arrivals.push_back({j, &reason->second, t.capped_at});
  }

  // Everything qualifies: patch the kept decision. Its order holds the
  // kept requests in the order they keep; the arrivals go in between.
  for (int o : left_) decision_.pending_reasons.erase(input_.pending[o].allocation_id);
  for (const auto& a : arrivals) decision_.pending_reasons.emplace(now[a.index].allocation_id, *a.reason);
  auto& ids = decision_.order;
  std::vector<std::string> order;
  order.reserve(order_.size());
  size_t kept = 0;
  for (int c : order_) {
    const std::string& id = now[c].allocation_id;
    if (old_of_new_[c] < 0) {
      order.push_back(id);
      continue;
    }
    while (ids[kept] != id) ++kept;  // past the requests that left
    order.push_back(std::move(ids[kept++]));
  }
  ids = std::move(order);
  std::vector<RequestTrace> trace(now.size());
  for (int j = 0; j < static_cast<int>(now.size()); ++j)
    if (old_of_new_[j] >= 0) trace[j] = trace_[old_of_new_[j]];
  for (const auto& a : arrivals) trace[a.index].capped_at = a.capped_at;
  trace_ = std::move(trace);
  return true;
}

bool PoolScheduler::CarryVictims(const std::vector<RunningAllocation>& now) {
  const auto new_of_old = MatchById(input_.running, now, SameVictimKey);
  std::vector<int> victims;
  victims.reserve(now.size());
  std::vector<char> placed(now.size(), 0);
  for (int o : victims_)
    if (new_of_old[o] >= 0) {
      victims.push_back(new_of_old[o]);
      placed[new_of_old[o]] = 1;
    }
  // Victims that were not (started, changed, or stopping no longer).
  size_t added = 0;
  for (int i = 0; i < static_cast<int>(now.size()); ++i) {
    if (placed[i] || !Victim(now[i])) continue;
    if (++added > kMostPlaced) return false;
    auto at = std::lower_bound(victims.begin(), victims.end(), i,
                               [&](int x, int y) { return VictimBefore(now, x, y); });
    if (at != victims.end() && !VictimBefore(now, i, *at)) return false;  // equal keys: a repeated id
    victims.insert(at, i);
  }
  victims_ = std::move(victims);
  return true;
}

void PoolScheduler::Full(const PoolInput& input) {
  if (!ids_kept_) {
    decision_ = SchedulePool(input);  // a repeated id: the pure pass, as it is
    order_kept_ = false;
    return;
  }
  if (input.policy.type == PoolPolicy::Type::kFairShare) {
    scheduling::ScheduleFairShare(input, by_id_, decision_);
    order_kept_ = false;
    return;
  }
  scheduling::SchedulePriority(input, {order_, by_id_, victims_}, decision_, trace_);
}

const PoolDecision& PoolScheduler::Schedule(PoolInput& input) {
  const bool priority = input.policy.type == PoolPolicy::Type::kPriority;
  last_path_ = Path::kFull;
  bool ids_carried = false;    // by_id_ is by the new indexes
  bool order_carried = false;  // so is order_
  bool same_running = false;
  if (kept_) {
    Match(input.pending);
    same_running = SameAll(input.running, input_.running, SameRunning);
    // Only the queue changed, if anything.
    const bool same_pool = same_running && SameSettingsAndAgents(input, input_);
    ids_carried = ids_kept_ && CarryById(input.pending);
    order_carried = ids_carried && order_kept_ && CarryOrder(input.pending);
    if (same_pool && arrived_.empty() && left_.empty() && (!seq_moved_ || order_carried)) {
      // The same requests (perhaps in another vector order, or with
      // queued_seqs that keep their order): the same decision.
      last_path_ = Path::kUnchanged;
      if (!ids_carried) ids_kept_ = false;
      if (!order_carried) order_kept_ = false;
      if (order_carried) {
        std::vector<RequestTrace> trace(input.pending.size());
        for (size_t j = 0; j < input.pending.size(); ++j) trace[j] = trace_[old_of_new_[j]];
        trace_ = std::move(trace);
      }
    } else if (order_carried && same_pool && QueueOnly(input.pending)) {
      last_path_ = Path::kQueue;
    }
  }
  if (last_path_ == Path::kFull) {
    // The victims in their order: as they were when the running allocations
    // are, else carried over, else sorted.
    if (!priority) {
      victims_kept_ = false;
    } else if (!same_running || !victims_kept_) {
      if (!kept_ || !victims_kept_ || !CarryVictims(input.running))
        victims_ = scheduling::PriorityVictimOrder(input.running);
      victims_kept_ = true;
    }
    if (!ids_carried) {
      by_id_.resize(input.pending.size());
      for (int p = 0; p < static_cast<int>(by_id_.size()); ++p) by_id_[p] = p;
      std::sort(by_id_.begin(), by_id_.end(), [&](int x, int y) {
        return input.pending[x].allocation_id < input.pending[y].allocation_id;
      });
      ids_kept_ = true;
      for (size_t x = 1; x < by_id_.size(); ++x)
        if (input.pending[by_id_[x - 1]].allocation_id == input.pending[by_id_[x]].allocation_id)
          ids_kept_ = false;  // a repeated id
    }
    if (priority && !order_carried) order_ = scheduling::PriorityOrder(input.pending);
    order_kept_ = priority && ids_kept_;
    Full(input);
  }
  kept_ = true;
  std::swap(input_, input);
  return decision_;
}

}  // namespace ring
