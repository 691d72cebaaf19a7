#include "master/scheduler/scheduling_pass.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string_view>
#include <unordered_map>

#include "master/scheduler/scheduling_reasons.h"

namespace ring::scheduling {
namespace {

// Eight bytes of an id from `from`, big-endian, zero padded: ids whose
// first eight bytes differ compare as IdPrefix(id, 0) does, and those equal
// there compare as IdPrefix(id, 8) when that differs (ids with no NUL byte).
uint64_t IdPrefix(std::string_view id, size_t from) {
  uint64_t prefix = 0;
  for (size_t i = from; i < from + 8; ++i)
    prefix = prefix << 8 | (i < id.size() ? static_cast<unsigned char>(id[i]) : 0u);
  return prefix;
}

}  // namespace

PoolPass::PoolPass(const PoolInput& input)
    : input_(input),
      slots_(input.agents),
      where_(input.running, slots_),
      gone_(input.running.size(), 0),
      search_(slots_, where_, gone_),
      leaving_on_(slots_.agent_count()),
      state_(input.pending.size()),
      place_failed_(kFitKeySlots * 3, 0),
      never_fits_by_key_(kFitKeySlots * 3, nullptr),
      wait_failed_(kFitKeySlots * 3, 0) {
  ReadRequests();
  order_.reserve(input.pending.size());
  for (size_t i = 0; i < input.running.size(); ++i) {
    const auto& r = input.running[i];
    capped_[running_experiment_[i]] += r.slots;
    if (!r.preempting) staying_[running_experiment_[i]] += r.slots;
  }
  // Allocations already stopping, oldest first, so reasons name them stably.
  std::vector<int> stopping;
  for (int i = 0; i < static_cast<int>(input.running.size()); ++i)
    if (input.running[i].preempting) stopping.push_back(i);
  std::sort(stopping.begin(), stopping.end(), [&](int x, int y) {
    const auto& a = input.running[x];
    const auto& b = input.running[y];
    return a.started_seq != b.started_seq ? a.started_seq < b.started_seq : a.allocation_id < b.allocation_id;
  });
  for (int i : stopping) MarkGone(i);
}

void PoolPass::ReadRequests() {
  std::unordered_map<int64_t, int> number;
  int64_t last_id = 0;
  int last = -1;
  auto of = [&](int64_t id) {
    if (last >= 0 && id == last_id) return last;  // requests of an experiment often come together
    last_id = id;
    if (auto it = number.find(id); it != number.end()) return last = it->second;  // no node made
    last = static_cast<int>(experiment_ids_.size());
    number.emplace(id, last);
    experiment_ids_.push_back(id);
    return last;
  };
  running_experiment_.reserve(input_.running.size());
  for (const auto& r : input_.running) running_experiment_.push_back(of(r.experiment_id));
  const size_t n = input_.pending.size();
  request_experiment_.reserve(n);
  brief_.resize(n);
  request_cannot_run_.assign(n, -1);
  std::map<ContainerNeed, int> entries;
  for (size_t p = 0; p < n; ++p) {
    const auto& r = input_.pending[p];
    request_experiment_.push_back(of(r.experiment_id));
    auto& b = brief_[p];
    b.need = NeedOf(r);
    b.priority = r.priority;
    b.weight = r.weight;
    b.max_slots = r.max_slots;
    b.excluded = !r.excluded_agents.empty();
    b.container = r.container.has_value();
    if (r.container) request_cannot_run_[p] = ContainerEntry(*r.container, entries);
    b.restricted = b.excluded || !CannotRun(static_cast<int>(p)).empty();  // its entry is complete here
  }
  capped_.assign(experiment_ids_.size(), 0);
  staying_.assign(experiment_ids_.size(), 0);
}

int PoolPass::ContainerEntry(const ContainerNeed& need, std::map<ContainerNeed, int>& entries) {
  auto [it, added] = entries.emplace(need, static_cast<int>(cannot_run_.size()));
  if (added) {
    std::vector<int> agents;
    for (int a = 0; a < slots_.agent_count(); ++a)
      if (!CanRunContainers(slots_.view(a), need)) agents.push_back(a);
    cannot_run_.push_back(std::move(agents));
  }
  return it->second;
}

const std::vector<int>& PoolPass::CannotRun(int p) const {
  static const std::vector<int> kNone;
  const int entry = request_cannot_run_[p];
  return entry < 0 ? kNone : cannot_run_[entry];
}

void PoolPass::MarkGone(int i) {
  gone_[i] = 1;
  for (const auto& [a, n] : where_.of(i)) {
    if (a < 0) continue;
    slots_.AddLeaving(a, n);
    leaving_on_[a].push_back(i);
  }
}

void PoolPass::ReuseAssignments(std::vector<Assignment>&& old) {
  decision_.assignments = std::move(old);
  assigned_ = 0;
}

void PoolPass::Consider(int p) {
  order_.push_back(p);
}

void PoolPass::SetReason(int p, std::string reason) {
  state_[p].reason = std::move(reason);
  state_[p].shared = nullptr;
}

const std::string* PoolPass::ShareReason(int p, std::string reason) {
  const std::string* shared = &shared_reasons_.emplace_back(std::move(reason));
  ShareReason(p, shared);
  return shared;
}

void PoolPass::ShareReason(int p, const std::string* reason) {
  state_[p].reason.clear();
  state_[p].shared = reason;
}

bool PoolPass::Admissible(int p) {
  const Brief& b = brief_[p];
  const int slots = b.need.slots;
  const std::string& pool = input_.pool;
  if (slots > 0 && input_.agents.empty()) {
    SetReason(p, "no agents in pool " + pool);
    return false;
  }
  if (b.container && !input_.agents.empty() &&
      CannotRun(p).size() == static_cast<size_t>(slots_.agent_count())) {
    SetReason(p, NoContainerAgentReason(*request(p).container, slots_.agent_count(), pool));
    return false;
  }
  // The same for every request of the need: looked up by FitKey when it
  // has one (most requests), else in the map.
  const int key = FitKey(b.need);
  const std::optional<std::string>* never = key >= 0 ? never_fits_by_key_[key] : nullptr;
  if (!never) {
    auto it = never_fits_.find(b.need);
    if (it == never_fits_.end())
      it = never_fits_.emplace(b.need, NeverFitsIn(input_.agents, b.need, pool)).first;
    never = &it->second;
    if (key >= 0) never_fits_by_key_[key] = never;
  }
  if (*never) {
    ShareReason(p, &**never);
    return false;
  }
  if (slots_.enabled_agents() == 0) {
    SetReason(p, "no enabled agents in pool " + pool);
    return false;
  }
  if (b.max_slots && CappedSlots(request_experiment_[p]) + slots > *b.max_slots) {
    const std::pair<int, int> key{slots, *b.max_slots};
    auto reason = max_slots_reasons_.find(key);
    if (reason == max_slots_reasons_.end())
      reason = max_slots_reasons_.emplace(key, MaxSlotsReason(slots, *b.max_slots)).first;
    ShareReason(p, &reason->second);
    return false;
  }
  return true;
}

bool PoolPass::PlaceNow(int p) {
  const Need n = need(p);
  const int key = FitKey(n);
  if (key >= 0 && place_failed_[key]) return false;
  auto fit = slots_.FitNow(n, input_.policy.fit);
  if (!fit) {
    if (key >= 0 && !slots_.any_hidden()) place_failed_[key] = 1;
    return false;
  }
  const auto& r = request(p);
  auto& assignments = decision_.assignments;
  if (assigned_ == assignments.size()) assignments.emplace_back();
  slots_.Take(*fit, r.slots, r.allocation_id, assignments[assigned_++]);
  capped_[request_experiment_[p]] += r.slots;
  AddStaying(request_experiment_[p], r.slots);
  state_[p] = {Outcome::kAssigned, false, {}};
  return true;
}

void PoolPass::Promise(int p, const Fit& fit) {
  const auto& r = request(p);
  std::vector<std::string_view> waiting_for;
  for (int a : fit.agents) {
    slots_.Hold(a);
    for (int i : leaving_on_[a]) {
      const std::string_view id = input_.running[i].allocation_id;
      if (std::find(waiting_for.begin(), waiting_for.end(), id) == waiting_for.end())
        waiting_for.push_back(id);
    }
  }
  capped_[request_experiment_[p]] += r.slots;
  AddStaying(request_experiment_[p], r.slots);
  state_[p] = {Outcome::kPromised, true, WaitingReason(waiting_for)};
}

bool PoolPass::WaitForLeaving(int p) {
  const Need n = need(p);
  const int key = FitKey(n);
  const int now = slots_.leaving_added() + 1;
  if (key >= 0 && wait_failed_[key] == now) return false;
  auto fit = slots_.FitWhenLeft(n, input_.policy.fit);
  if (!fit) {
    if (key >= 0 && !slots_.any_hidden()) wait_failed_[key] = now;
    return false;
  }
  Promise(p, *fit);
  return true;
}

bool PoolPass::Preempt(int p, Candidates& candidates,
                       const std::function<VictimSearch::Verdict(int)>& admit) {
  const auto& r = request(p);
  auto choice = search_.Find(need(p), input_.policy.fit, candidates, admit);
  if (!choice) return false;
  for (int v : choice->victims) {
    const auto& victim = input_.running[v];
    MarkGone(v);
    AddStaying(running_experiment_[v], -victim.slots);
    decision_.preempt.push_back(victim.allocation_id);
    preempted_for_.push_back({&victim.allocation_id, &r.allocation_id});
  }
  Promise(p, choice->fit);
  return true;
}

bool PoolPass::HoldFor(int p) {
  const bool whole_agents = need(p).whole_agents();
  const int need = request(p).slots;
  std::vector<int> hold;
  if (need <= slots_.max_enabled_size()) {
    // The usable agent large enough with the most free slots, lowest id first.
    int best = -1;
    const auto& by_free = slots_.by_free();
    for (int f = by_free.Largest(); f > 0 && best < 0; f = by_free.Below(f))
      for (int a : by_free.of(f))
        if (slots_.total(a) >= need) {
          best = a;
          break;
        }
    if (best >= 0) hold.push_back(best);
  } else if (whole_agents) {
    // Whole agents: the largest dividing shape with enough usable agents;
    // of those, the ones with the most free slots, lowest id first.
    const auto& shapes = slots_.shapes();
    for (int g = 0; g < static_cast<int>(shapes.size()) && hold.empty(); ++g) {
      const int size = shapes[g].size;
      if (size >= need || need % size != 0) continue;
      // Per count of free slots (0 .. size), the usable agents of the shape
      // with it, ascending: the k with the most free slots, lowest id first,
      // are taken from the largest count down.
      std::vector<std::vector<int>> by_free(static_cast<size_t>(size) + 1);
      size_t usable = 0;
      for (int a = 0; a < slots_.agent_count(); ++a)
        if (slots_.shape(a) == g && slots_.usable(a)) {
          by_free[std::min(slots_.free(a), size)].push_back(a);
          ++usable;
        }
      const size_t k = static_cast<size_t>(need / size);
      if (usable < k) continue;
      std::vector<int> members;
      for (int f = size; f >= 0 && members.size() < k; --f)
        for (size_t i = 0; i < by_free[f].size() && members.size() < k; ++i) members.push_back(by_free[f][i]);
      if (std::none_of(members.begin(), members.end(), [&](int a) { return slots_.free(a) > 0; })) break;
      hold = std::move(members);
    }
  }
  for (int a : hold) slots_.Hold(a);
  state_[p].holder = !hold.empty();
  return !hold.empty();
}

void PoolPass::Explain(bool by_priority) {
  const int largest_free = slots_.LargestFreeBlock();
  const auto idle = slots_.IdleEnabledPerShape();
  int holders_ahead = 0;
  int same_priority_holders = 0;  // by_priority: holders ahead of the request's own priority
  std::optional<int> level;
  constexpr size_t kAhead = 8;
  for (size_t i = 0; i < order_.size(); ++i) {
    if (i + kAhead < order_.size()) Prefetch(order_[i + kAhead]);
    const int p = order_[i];
    auto& s = state_[p];
    const Brief& b = brief_[p];
    if (level != b.priority) {
      level = b.priority;
      same_priority_holders = 0;
    }
    if (s.outcome != Outcome::kAssigned && s.reason.empty() && !s.shared) {
      // Reasons many requests share are built once and pointed at.
      if (holders_ahead > 0 && FitsPhysically(slots_, idle, largest_free, need(p))) {
        const std::pair<int, bool> key{holders_ahead, by_priority && same_priority_holders == 0};
        auto it = behind_reasons_.find(key);
        if (it == behind_reasons_.end())
          it = behind_reasons_.emplace(key, BehindReason(key.first, key.second)).first;
        s.shared = &it->second;
      } else {
        // The same for every request of a need.
        const Need n = need(p);
        auto it = shape_reasons_.find(n);
        if (it == shape_reasons_.end())
          it = shape_reasons_.emplace(n, ShapeReason(slots_, idle, largest_free, n, input_.pool)).first;
        s.shared = &it->second;
      }
    }
    const bool excluded = s.outcome != Outcome::kAssigned && b.excluded;
    const bool container = s.outcome != Outcome::kAssigned && b.container && !CannotRun(p).empty() &&
                           CannotRun(p).size() < static_cast<size_t>(slots_.agent_count());
    if ((excluded || container) && s.shared) {
      s.reason = *s.shared;  // its own, with what it adds
      s.shared = nullptr;
    }
    if (excluded) s.reason += ExcludedReason(request(p).excluded_agents);
    if (container)
      s.reason += ContainerAgentsReason(*request(p).container,
                                        slots_.agent_count() - static_cast<int>(CannotRun(p).size()),
                                        slots_.agent_count(), input_.pool);
    if (s.holder) {
      ++holders_ahead;
      ++same_priority_holders;
    }
  }
}

void PoolPass::FillPreemptedFor(std::map<std::string, std::string>& out) {
  // In victim id order (of a victim named twice, the later one's stays, as
  // assigning in turn), walked beside what `out` holds: equal entries stay,
  // others are replaced, added at their place or erased. Sorted by keys
  // whose first bytes most comparisons end at, as Finish's reasons.
  struct Victim {
    uint64_t prefix;
    uint64_t next;
    std::string_view id;
    int turn;  // in preempted_for_
  };
  std::vector<Victim> victims;
  victims.reserve(preempted_for_.size());
  for (int turn = 0; turn < static_cast<int>(preempted_for_.size()); ++turn) {
    const std::string_view id = *preempted_for_[turn].first;
    victims.push_back({IdPrefix(id, 0), IdPrefix(id, 8), id, turn});
  }
  std::sort(victims.begin(), victims.end(), [](const Victim& a, const Victim& b) {
    if (a.prefix != b.prefix) return a.prefix < b.prefix;
    if (a.next != b.next) return a.next < b.next;
    return a.id != b.id ? a.id < b.id : a.turn < b.turn;
  });
  auto it = out.begin();
  for (size_t i = 0; i < victims.size(); ++i) {
    const std::string_view victim = victims[i].id;
    if (i + 1 < victims.size() && victims[i + 1].id == victim) continue;
    const std::string& request = *preempted_for_[victims[i].turn].second;
    int order = -1;
    while (it != out.end() && (order = it->first.compare(victim)) < 0) it = out.erase(it);
    if (it != out.end() && order == 0) {
      if (it->second != request) it->second = request;
      ++it;
    } else {
      out.emplace_hint(it, std::string(victim), request);
    }
  }
  out.erase(it, out.end());
}

PoolDecision PoolPass::Finish(bool by_priority) {
  Explain(by_priority);
  FillPreemptedFor(decision_.preempted_for);
  decision_.assignments.resize(assigned_);
  // The reasons go into the map in id order, each at its end, so no insert
  // walks the tree (of an id given twice, the later one's stays).
  struct Waiting {
    uint64_t prefix;  // IdPrefix(id, 0): most comparisons end there
    uint64_t next;    // IdPrefix(id, 8): most of the others (ids with a common stem)
    std::string_view id;
    int turn;  // in order_
  };
  std::vector<Waiting> waiting;
  for (int turn = 0; turn < static_cast<int>(order_.size()); ++turn) {
    const int p = order_[turn];
    if (state_[p].outcome == Outcome::kAssigned) continue;
    const std::string_view id = request(p).allocation_id;
    waiting.push_back({IdPrefix(id, 0), IdPrefix(id, 8), id, turn});
  }
  std::sort(waiting.begin(), waiting.end(), [](const Waiting& a, const Waiting& b) {
    if (a.prefix != b.prefix) return a.prefix < b.prefix;
    if (a.next != b.next) return a.next < b.next;
    return a.id != b.id ? a.id < b.id : a.turn < b.turn;
  });
  auto& reasons = decision_.pending_reasons;
  for (const auto& w : waiting)
    reasons.insert_or_assign(reasons.end(), std::string(w.id), Reason(state_[order_[w.turn]]));
  decision_.order.reserve(order_.size());
  for (int p : order_) decision_.order.push_back(request(p).allocation_id);
  return std::move(decision_);
}

void PoolPass::FinishInto(bool by_priority, const std::vector<int>& by_id, PoolDecision& into) {
  Explain(by_priority);
  FillPreemptedFor(into.preempted_for);
  decision_.assignments.resize(assigned_);
  into.assignments = std::move(decision_.assignments);
  into.preempt = std::move(decision_.preempt);
  std::vector<char> considered(input_.pending.size(), 0);
  for (int p : order_) considered[p] = 1;
  // One walk of the kept reasons and of the waiting requests, both in id
  // order: equal entries stay, others are replaced, added or erased.
  auto& reasons = into.pending_reasons;
  auto it = reasons.begin();
  constexpr size_t kAhead = 8;  // the requests are scattered: their ids are asked for ahead
  for (size_t i = 0; i < by_id.size(); ++i) {
    if (i + kAhead < by_id.size()) __builtin_prefetch(&input_.pending[by_id[i + kAhead]]);
    const int p = by_id[i];
    if (!considered[p] || state_[p].outcome == Outcome::kAssigned) continue;
    const std::string& id = request(p).allocation_id;
    int order = -1;
    while (it != reasons.end() && (order = it->first.compare(id)) < 0) it = reasons.erase(it);
    if (it != reasons.end() && order == 0) {
      // Copied over the kept text, whose storage stays: most changed
      // reasons are shared ones, which Reason would copy into a new string.
      if (it->second != state_[p].text()) it->second = state_[p].text();
      ++it;
    } else {
      reasons.emplace_hint(it, id, Reason(state_[p]));
    }
  }
  reasons.erase(it, reasons.end());
  into.order.resize(order_.size());
  for (size_t i = 0; i < order_.size(); ++i) {
    if (i + kAhead < order_.size()) __builtin_prefetch(&input_.pending[order_[i + kAhead]]);
    const std::string& id = request(order_[i]).allocation_id;
    if (into.order[i] != id) into.order[i] = id;
  }
}

}  // namespace ring::scheduling
