#include "master/scheduler/scheduling_fair_share.h"

#include <algorithm>
#include <functional>
#include <iterator>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "master/scheduler/scheduling_pass.h"
#include "master/scheduler/scheduling_reasons.h"

namespace ring::scheduling {
namespace {

constexpr double kEpsilon = 1e-9;
constexpr double kMinWeight = 1e-3;  // a non-positive weight still gets a sliver

// The order experiments take turns in: the smallest fraction of its share
// used first, then the earliest next request, then the experiment id (then
// the queue index, which the id already decides). Compared field by field,
// as a tuple of them would be.
struct Turn {
  double fraction;  // used / share
  int64_t seq;      // of its next request
  int64_t experiment;
  int index;  // of its queue
  bool operator<(const Turn& o) const {
    if (fraction != o.fraction) return fraction < o.fraction;
    if (seq != o.seq) return seq < o.seq;
    if (experiment != o.experiment) return experiment < o.experiment;
    return index < o.index;
  }
};

// The turns waiting, smallest first (a binary heap). The experiment whose
// turn it is stays on top while its request is tried, and is then put back
// with its next turn in one sift down instead of a pop and a push. No two
// turns are equal (their queue indexes differ), so they come in the order
// any priority queue gives.
class Turns {
 public:
  bool empty() const { return heap_.empty(); }
  const Turn& top() const { return heap_.front(); }
  void Push(const Turn& t) {
    heap_.push_back(t);
    std::push_heap(heap_.begin(), heap_.end(), [](const Turn& a, const Turn& b) { return b < a; });
  }
  void ReplaceTop(const Turn& t) {
    heap_.front() = t;
    SiftDown();
  }
  void Pop() {
    heap_.front() = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) SiftDown();
  }

 private:
  void SiftDown() {
    const size_t n = heap_.size();
    const Turn moving = heap_.front();
    size_t i = 0;
    for (;;) {
      size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && heap_[child + 1] < heap_[child]) ++child;
      if (!(heap_[child] < moving)) break;
      heap_[i] = heap_[child];
      i = child;
    }
    heap_[i] = moving;
  }

  std::vector<Turn> heap_;
};

// Admits, in one victim search, running allocations of experiments above
// their share, each experiment only while it stays above its share counting
// the allocations already taken in the search.
//
// An experiment at or below its share stays so for the rest of the main
// loop: it is given slots only up to its share, or when it has nothing
// running, and then it has no running allocation to reclaim. So its
// candidates are dropped for the pass, not skipped again in every search
// (one of zero slots, which does not count as running, is only skipped).
class Reclaim {
 public:
  Reclaim(const PoolPass& pass, const std::vector<double>& shares)
      : pass_(pass), shares_(shares), taken_(shares.size(), 0) {
    // What each verdict reads of a running allocation, side by side: a
    // search asks about thousands of them, and the allocations are large.
    const int n = static_cast<int>(pass.input().running.size());
    running_.reserve(n);
    for (int i = 0; i < n; ++i) running_.push_back({pass.experiment_of_running(i), pass.running(i).slots});
  }

  // Before each search.
  void Reset() {
    for (int x : touched_) taken_[x] = 0;
    touched_.clear();
  }

  VictimSearch::Verdict operator()(int i) {
    const auto [x, slots] = running_[i];
    if (slots > 0 && pass_.StayingSlots(x) - shares_[x] <= kEpsilon) return VictimSearch::Verdict::kDrop;
    const double above = pass_.StayingSlots(x) - taken_[x] - shares_[x];
    if (above <= kEpsilon) return VictimSearch::Verdict::kSkip;
    if (taken_[x] == 0) touched_.push_back(x);
    taken_[x] += slots;
    return VictimSearch::Verdict::kTake;
  }

 private:
  const PoolPass& pass_;
  const std::vector<double>& shares_;         // by experiment number
  std::vector<int> taken_;                    // by experiment number: slots taken in this search
  std::vector<int> touched_;                  // experiment numbers with taken_ possibly > 0
  std::vector<std::pair<int, int>> running_;  // per running allocation: (experiment number, slots)
};

// Which candidates a walk with Reclaim would take, marked on the
// Candidates before each search so that it can use a ReachIndex. Of one
// experiment's candidates, in order, a walk takes those offered (not gone,
// freeing a usable slot) while the experiment's staying slots, less the
// slots of its candidates taken before, stay above its share: a prefix of
// its offered candidates. A prefix changes when the experiment's staying
// slots do (its victims go: the only way a candidate becomes gone) or when
// one of its candidates stops being offered because its agents stopped
// being usable (held); only those experiments are redone, and each from
// where its walk can first differ. Before the first candidate whose offer
// changed, and before the walk's budget (staying slots, old or new, less
// the share) runs out, a candidate is admitted exactly when offered: the
// walk kept, per index, the slots taken before it, and resumes from there.
// A candidate past the prefix, of an experiment whose walk ran out of
// budget before it, is not admitted whether offered or not: a change on
// its agents changes nothing.
class ReclaimMarks {
 public:
  ReclaimMarks(const PoolPass& pass, const std::vector<double>& shares, Candidates& candidates)
      : pass_(pass),
        shares_(shares),
        candidates_(candidates),
        of_experiment_(shares.size()),
        staying_(shares.size(), -1),
        end_(shares.size(), 0),
        taken_(shares.size(), 0),
        stop_(shares.size(), 0),
        from_(shares.size(), 0),
        taken_before_(shares.size()),
        end_before_(shares.size()),
        experiment_at_(candidates.size()),
        index_at_(candidates.size()),
        slots_at_(candidates.size()),
        running_at_(candidates.size()),
        on_usable_(candidates.size()),
        changes_seen_(pass.slots().changes().size()),
        staying_seen_(pass.staying_changes().size()),
        usable_(pass.slots().agent_count()) {
    for (int a = 0; a < pass.slots().agent_count(); ++a) usable_[a] = pass.slots().usable(a);
    for (int k = 0; k < candidates.size(); ++k) {
      const int x = pass.experiment_of_running(candidates.at(k));
      experiment_at_[k] = x;
      index_at_[k] = of_experiment_[x].size();
      slots_at_[k] = pass.running(candidates.at(k)).slots;
      running_at_[k] = candidates.at(k);
      on_usable_[k] = OnUsable(k);
      of_experiment_[x].push_back(k);
    }
    // Every position starts marked: the first Refresh goes through them all.
    for (int x = 0; x < static_cast<int>(shares.size()); ++x) {
      end_[x] = of_experiment_[x].size();
      taken_before_[x].assign(of_experiment_[x].size() + 1, 0);
      end_before_[x].assign(of_experiment_[x].size() + 1, 0);
      dirty_list_.push_back(x);
    }
  }

  // Before each search.
  void Refresh() {
    auto mark = [&](int x, size_t from) {
      if (from_[x] == kClean) dirty_list_.push_back(x);
      from_[x] = std::min(from_[x], from);
    };
    // An agent that stops being usable (held) stops offering what runs on
    // it; a victim going lowers its experiment's staying slots.
    const auto& changes = pass_.slots().changes();
    for (; changes_seen_ < changes.size(); ++changes_seen_) {
      const int a = changes[changes_seen_];
      if (a < 0 || a >= static_cast<int>(usable_.size()) || usable_[a] == pass_.slots().usable(a)) continue;
      usable_[a] = pass_.slots().usable(a);
      for (const auto& [k, n] : candidates_.on_agent(a)) {
        on_usable_[k] = OnUsable(k);
        const int x = experiment_at_[k];
        if (index_at_[k] < end_[x] || staying_[x] - taken_[x] - shares_[x] > kEpsilon) mark(x, index_at_[k]);
      }
    }
    // Since the last Refresh, only experiments whose staying slots changed
    // can differ from staying_ (every one was redone by the first): looked
    // at in ascending order, as a walk over all of them would.
    const auto& staying_changes = pass_.staying_changes();
    changed_.assign(staying_changes.begin() + static_cast<std::ptrdiff_t>(staying_seen_),
                    staying_changes.end());
    staying_seen_ = staying_changes.size();
    std::sort(changed_.begin(), changed_.end());
    changed_.erase(std::unique(changed_.begin(), changed_.end()), changed_.end());
    for (int x : changed_) {
      const int staying = pass_.StayingSlots(x);
      if (staying != staying_[x]) mark(x, stop_[x]);
    }
    for (int x : dirty_list_) Redo(x);
    dirty_list_.clear();
  }

 private:
  bool OnUsable(int k) const {
    for (const auto& [a, n] : candidates_.parts(k))
      if (a >= 0 && pass_.slots().usable(a)) return true;
    return false;
  }

  // As Reclaim's verdicts in a walk: taken while above the share counting
  // the slots taken before.
  void Redo(int x) {
    const int staying = pass_.StayingSlots(x);
    auto& taken_before = taken_before_[x];
    auto& end_before = end_before_[x];
    // Where the walk can first differ: at the first changed offer, where
    // the smaller budget runs out, or where the last walk stopped.
    const int budget = std::min(staying, staying_[x]);
    const auto first = taken_before.begin();
    const size_t out = static_cast<size_t>(
        std::partition_point(first, first + static_cast<std::ptrdiff_t>(stop_[x]) + 1,
                             [&](int taken) { return budget - taken - shares_[x] > kEpsilon; }) -
        first);
    const size_t from = std::min({from_[x], out, stop_[x]});
    from_[x] = kClean;
    staying_[x] = staying;
    const auto& ks = of_experiment_[x];
    // What the walk reads, in locals: SetAdmitted's stores could otherwise
    // be taken to change them.
    const double share = shares_[x];
    const bool at_share = staying - share <= kEpsilon;
    const size_t size = ks.size();
    const size_t old_end = end_[x];
    const int* const positions = ks.data();
    int* const taken_at = taken_before.data();
    size_t* const end_at = end_before.data();
    const int* const slots_at = slots_at_.data();
    const char* const on_usable = on_usable_.data();
    const int* const running_at = running_at_.data();
    const char* const gone = pass_.gone_flags();
    int taken = taken_at[from];
    size_t i = from, end = end_at[from];
    for (; i < size; ++i) {
      taken_at[i] = taken;
      end_at[i] = end;
      const int k = positions[i];
      const int slots = slots_at[k];
      bool admit = false;
      // Offered (on a usable agent, not gone), then Reclaim's verdict.
      if (on_usable[k] && !gone[running_at[k]] && !(slots > 0 && at_share) &&
          staying - taken - share > kEpsilon) {
        admit = true;
        taken += slots;
        end = i + 1;
      }
      candidates_.SetAdmitted(k, admit);
      // Past both the old and the new prefix nothing was or is admitted.
      if (!admit && i + 1 >= old_end && staying - taken - share <= kEpsilon) {
        ++i;
        break;
      }
    }
    taken_before[i] = taken;
    end_before[i] = end;
    stop_[x] = i;
    end_[x] = end;
    taken_[x] = taken;
  }

  const PoolPass& pass_;
  const std::vector<double>& shares_;
  Candidates& candidates_;
  std::vector<std::vector<int>> of_experiment_;  // per experiment number: its positions, in order
  std::vector<int> staying_;                     // per experiment number: its staying slots when redone
  static constexpr size_t kClean = std::numeric_limits<size_t>::max();
  // Per experiment number, indexes in of_experiment_:
  std::vector<size_t> end_;   // past its last admitted position
  std::vector<int> taken_;    // the slots of its admitted positions
  std::vector<size_t> stop_;  // where its last walk stopped
  std::vector<size_t> from_;  // the first whose offer may have changed since (kClean: none, not to redo)
  // Per experiment number, per index up to stop_ included, as the last walk
  // found them: the slots admitted before it, and past the last admitted
  // position before it.
  std::vector<std::vector<int>> taken_before_;
  std::vector<std::vector<size_t>> end_before_;
  std::vector<int> dirty_list_;
  std::vector<int> experiment_at_;  // per position: the experiment number
  std::vector<size_t> index_at_;    // per position: its index in its experiment's
  std::vector<int> slots_at_;       // per position: its slots (the allocations are large)
  std::vector<int> running_at_;     // per position: its running allocation (Candidates::at)
  // Per position: whether some agent of it is usable, as of the last
  // Refresh (redone for the candidates on agents whose usability changed).
  std::vector<char> on_usable_;
  size_t changes_seen_;
  size_t staying_seen_;       // in PoolPass::staying_changes()
  std::vector<int> changed_;  // Refresh's: experiment numbers whose staying slots changed
  std::vector<char> usable_;  // per agent, when last looked at
};

// A set of needs: those of few slots (most) flagged by slots and span, the
// others in a std::set.
class NeedSet {
 public:
  bool contains(const Need& n) const {
    const int key = Key(n);
    return key >= 0 ? small_[key] != 0 : others_.count(n) != 0;
  }
  void insert(const Need& n) {
    const int key = Key(n);
    if (key >= 0)
      small_[key] = 1;
    else
      others_.insert(n);
  }

 private:
  static constexpr int kSlots = 64;
  static constexpr int kSpans = 3;  // Span's values
  static int Key(const Need& n) {
    const int span = static_cast<int>(n.span);
    return n.slots >= 0 && n.slots < kSlots && span >= 0 && span < kSpans ? n.slots * kSpans + span : -1;
  }
  std::vector<char> small_ = std::vector<char>(kSlots * kSpans, 0);
  std::set<Need> others_;
};

// Whether every element of [first, last) is before the next by `before`
// (a strict weak order): then no two are equivalent, and it is the only
// order std::sort can leave them in.
template <typename It, typename Before>
bool StrictlyOrdered(It first, It last, Before before) {
  if (first == last) return true;
  for (It next = std::next(first); next != last; first = next, ++next)
    if (!before(*first, *next)) return false;
  return true;
}

// Running allocations that may be reclaimed, newest started first (sorted
// by compact keys: the allocations themselves are large).
std::vector<int> ReclaimOrder(const std::vector<RunningAllocation>& running) {
  std::vector<std::pair<int64_t, int>> keys;  // (started_seq, index)
  for (int i = 0; i < static_cast<int>(running.size()); ++i)
    if (running[i].preemptible && !running[i].preempting) keys.push_back({running[i].started_seq, i});
  const auto newer = [&](const std::pair<int64_t, int>& a, const std::pair<int64_t, int>& b) {
    return a.first != b.first ? a.first > b.first
                              : running[a.second].allocation_id < running[b.second].allocation_id;
  };
  // The allocations usually come in the order they started: keys strictly
  // in one order or the other have one sorted order, which the sort would
  // make.
  if (StrictlyOrdered(keys.rbegin(), keys.rend(), newer))
    std::reverse(keys.begin(), keys.end());
  else if (!StrictlyOrdered(keys.begin(), keys.end(), newer))
    std::sort(keys.begin(), keys.end(), newer);
  std::vector<int> order;
  order.reserve(keys.size());
  for (const auto& k : keys) order.push_back(k.second);
  return order;
}

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

std::vector<ExperimentDemand> Demands(const PoolPass& pass) {
  const PoolInput& input = pass.input();
  struct Acc {
    double weight = 0;
    std::optional<int> max_slots;
    int demand = 0;
  };
  // By experiment number (each entry sees the same updates, in the same
  // order, as one by id would), put in id order at the end.
  std::vector<Acc> acc(pass.experiment_count());
  auto note = [&](int x, double weight, const std::optional<int>& max_slots) -> Acc& {
    auto& a = acc[x];
    a.weight = std::max(a.weight, weight);
    if (max_slots) a.max_slots = a.max_slots ? std::min(*a.max_slots, *max_slots) : *max_slots;
    return a;
  };
  for (int i = 0; i < static_cast<int>(input.running.size()); ++i) {
    const auto& r = input.running[i];
    auto& a = note(pass.experiment_of_running(i), r.weight, r.max_slots);
    if (!r.preempting) a.demand += r.slots;
  }
  std::map<Need, bool> placeable;
  std::optional<Need> last_need;  // and whether it is placeable, looked up last
  bool last_placeable = false;
  for (int p = 0; p < static_cast<int>(input.pending.size()); ++p) {
    const PoolPass::Brief& b = pass.brief(p);
    auto& a = note(pass.experiment_of_request(p), b.weight, b.max_slots);
    if (last_need != b.need) {
      auto it = placeable.find(b.need);
      if (it == placeable.end())
        it = placeable.emplace(b.need, b.need.slots > 0 && !NeverFitsIn(input.agents, b.need, input.pool))
                 .first;
      last_need = b.need;
      last_placeable = it->second;
    }
    if (last_placeable) a.demand += b.need.slots;
  }
  std::vector<int> numbers(acc.size());
  for (size_t x = 0; x < numbers.size(); ++x) numbers[x] = static_cast<int>(x);
  std::sort(numbers.begin(), numbers.end(),
            [&](int x, int y) { return pass.experiment_id(x) < pass.experiment_id(y); });
  std::vector<ExperimentDemand> out;
  for (int x : numbers) {
    const Acc& a = acc[x];
    const int demand = a.max_slots ? std::min(a.demand, *a.max_slots) : a.demand;
    if (demand > 0) out.push_back({pass.experiment_id(x), a.weight, demand});
  }
  return out;
}

namespace {

// The pass: experiments' turns, placements, reclaims, reasons.
void DecideFairShare(PoolPass& pass, const PoolInput& input) {
  const int capacity = pass.slots().enabled_slots();
  std::vector<double> shares(pass.experiment_count(), 0.0);  // by experiment number
  {
    const auto by_id = FairShares(Demands(pass), capacity);
    for (int x = 0; x < pass.experiment_count(); ++x) {
      auto it = by_id.find(pass.experiment_id(x));
      if (it != by_id.end()) shares[x] = it->second;
    }
  }

  // Each experiment's requests, FIFO; the queues in experiment id order.
  // Sorted by compact keys (the requests are large and scattered), which
  // compare as the requests do, so the sort makes the same moves.
  struct Queued {
    int64_t seq;
    int index;
  };
  std::vector<std::vector<Queued>> of_experiment(pass.experiment_count());
  for (int p = 0; p < static_cast<int>(input.pending.size()); ++p)
    of_experiment[pass.experiment_of_request(p)].push_back({input.pending[p].queued_seq, p});
  std::vector<int> experiments;  // per queue: its experiment number
  for (int e = 0; e < pass.experiment_count(); ++e)
    if (!of_experiment[e].empty()) experiments.push_back(e);
  std::sort(experiments.begin(), experiments.end(),
            [&](int x, int y) { return pass.experiment_id(x) < pass.experiment_id(y); });
  std::vector<std::vector<Queued>> queues;  // the turns read each one's seq
  for (int e : experiments) {
    auto& q = of_experiment[e];
    const auto before = [&](const Queued& a, const Queued& b) {
      return a.seq != b.seq ? a.seq < b.seq
                            : input.pending[a.index].allocation_id < input.pending[b.index].allocation_id;
    };
    // Pending requests usually come in queue order: then so does each queue.
    if (!StrictlyOrdered(q.begin(), q.end(), before)) std::sort(q.begin(), q.end(), before);
    queues.push_back(std::move(q));
  }
  std::vector<size_t> next(queues.size(), 0);
  auto turn = [&](int x) {
    const int e = experiments[x];
    const int used = pass.StayingSlots(e);
    const double share = shares[e];
    const double fraction =
        used == 0 ? 0.0 : (share > kEpsilon ? used / share : std::numeric_limits<double>::infinity());
    return Turn{fraction, queues[x][next[x]].seq, pass.experiment_id(e), x};
  };
  Turns turns;
  for (int x = 0; x < static_cast<int>(queues.size()); ++x) turns.Push(turn(x));

  Candidates victims(input.policy.preemption ? ReclaimOrder(input.running) : std::vector<int>{},
                     pass.footprints(), Candidates::Admission::kMarked);
  Reclaim reclaim(pass, shares);
  ReclaimMarks marks(pass, shares, victims);
  const std::function<VictimSearch::Verdict(int)> admit = [&](int i) { return reclaim(i); };

  NeedSet preemption_failed;  // needs reclaim could not place (they stay so in this pass)
  std::vector<char> reserved(pass.experiment_count(), 0);  // by experiment number: its first blocked
                                                           // request has held agents
  std::vector<int> beyond_share;                           // requests tried again with the leftover slots
  while (!turns.empty()) {
    const int x = turns.top().index;
    const int p = queues[x][next[x]++].index;
    const int slots = pass.need(p).slots;
    pass.Consider(p);
    const PoolPass::Excluding excluding(pass, p);
    if (pass.Admissible(p)) {
      const int used = pass.StayingSlots(experiments[x]);
      const double share = shares[experiments[x]];
      if (used > 0 && used + slots > share + kEpsilon) {
        beyond_share.push_back(p);
      } else if (!pass.PlaceNow(p) && !pass.WaitForLeaving(p)) {
        bool preempted = false;
        if (input.policy.preemption && !preemption_failed.contains(pass.need(p))) {
          reclaim.Reset();
          marks.Refresh();
          preempted = pass.Preempt(p, victims, admit);
          if (!preempted && !pass.Restricted(p)) preemption_failed.insert(pass.need(p));
        }
        if (!preempted && !reserved[experiments[x]]) {
          reserved[experiments[x]] = 1;
          pass.HoldFor(p);
        }
      }
    }
    if (next[x] < queues[x].size())
      turns.ReplaceTop(turn(x));
    else
      turns.Pop();
  }

  // Work conserving: slots nobody could use within their share go to the
  // requests beyond it, by the same turns (the experiment least over its
  // share first), each experiment's in FIFO order.
  std::vector<std::vector<Queued>> extra(pass.experiment_count());  // by experiment number
  for (int p : beyond_share) extra[pass.experiment_of_request(p)].push_back({input.pending[p].queued_seq, p});
  experiments.clear();
  queues.clear();
  for (int e = 0; e < pass.experiment_count(); ++e)
    if (!extra[e].empty()) experiments.push_back(e);
  std::sort(experiments.begin(), experiments.end(),
            [&](int x, int y) { return pass.experiment_id(x) < pass.experiment_id(y); });
  for (int e : experiments) queues.push_back(std::move(extra[e]));
  next.assign(queues.size(), 0);
  std::vector<const std::string*> at_share(queues.size(), nullptr);  // per queue, built once
  for (int x = 0; x < static_cast<int>(queues.size()); ++x) turns.Push(turn(x));
  while (!turns.empty()) {
    const int x = turns.top().index;
    const int p = queues[x][next[x]++].index;
    const PoolPass::Excluding excluding(pass, p);
    if (pass.Admissible(p) && !pass.PlaceNow(p)) {
      if (at_share[x])
        pass.ShareReason(p, at_share[x]);
      else
        at_share[x] = pass.ShareReason(p, AtShareReason(shares[experiments[x]], capacity));
    }
    if (next[x] < queues[x].size())
      turns.ReplaceTop(turn(x));
    else
      turns.Pop();
  }
}

}  // namespace

PoolDecision ScheduleFairShare(const PoolInput& input) {
  PoolPass pass(input);
  DecideFairShare(pass, input);
  return pass.Finish(false);
}

void ScheduleFairShare(const PoolInput& input, const std::vector<int>& by_id, PoolDecision& into) {
  PoolPass pass(input);
  pass.ReuseAssignments(std::move(into.assignments));
  DecideFairShare(pass, input);
  pass.FinishInto(false, by_id, into);
}

}  // namespace ring::scheduling
