#pragma once
// Which running allocations to stop so that one blocked request fits.
// Reads the pass's PoolSlots and changes nothing; the pass commits a choice.
// Owns scratch buffers reused between searches of one pass.
//
// Candidates are offered in the policy's preference order (priority: lowest
// priority first, newest started first; fair share: newest started first).
// Each one that frees a slot on a usable agent is taken if the policy admits
// it, until the request would fit by the placement rule: on one agent whose
// free + leaving + freed slots reach the request (several reaching at once:
// the fit policy picks), else (unless it must stay on one agent) on whole
// agents of one shape that would all be idle. Then victims are spared again from the last taken backwards
// while the rest still make room (for whole agents: still empty enough agents, besides those that need nobody
// stopped), and only those on the agents it will take are kept; of the agents the victims empty it takes the
// lowest ids. If no prefix of candidates makes it fit, nobody is chosen.
//
// Within a pass free slots only shrink, agents only become held and victims
// only go, so what cannot help stays so; such candidates are unlinked from
// the list and a pass with many searches does not walk them again and again:
//  - a candidate that is gone (stopping already, or a victim of this pass) or
//    that frees no slot on an agent usable by anyone (its agents held or
//    disabled): for every search;
//  - one the policy says it will never admit again (Verdict::kDrop,
//    Candidates::Retire);
//  - with memoryless admission (whether a candidate is admitted does not
//    depend on the others a search took before it), one whose agents could
//    not reach a request's size even if every candidate on them stopped: for
//    requests of that need (size and span). It would be taken and then not kept, so leaving
//    it out changes no choice.
// Only what holds for every request is unlinked. A restricted request's
// search (excluded agents, a container some agents cannot run: those agents
// hidden, PoolSlots::Hide) skips, in that search only, a candidate that is
// useless to it only because of its hidden agents (frees slots on hidden
// agents alone, or could reach the need only there); a later request that
// sees those agents still finds it, so a failed restricted search changes
// no other request's decision.
// When every candidate is admitted (the priority policy) a search does not
// walk at all while no agent is hidden: a ReachIndex (scheduling_reach.h)
// knows per agent where the walk would reach it, and the search rebuilds
// from there what the walk would have taken.
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "master/scheduler/scheduling_placement.h"
#include "master/scheduler/scheduling_reach.h"

namespace ring::scheduling {

// Where running allocations sit: for allocation i, the (agent index, slots)
// of each placement; an agent index of -1 means an agent outside the pool.
// One flat array, so the victim search reads few cache lines per candidate.
class Footprints {
 public:
  Footprints(const std::vector<RunningAllocation>& running, const PoolSlots& slots);
  // Those of `from`, reordered: entry k is `from`'s entry order[k].
  Footprints(const Footprints& from, const std::vector<int>& order);
  std::span<const std::pair<int, int>> of(int i) const {
    return {parts_.data() + begin_[i], parts_.data() + begin_[i + 1]};
  }

 private:
  std::vector<int> begin_;  // allocation i's parts are [begin_[i], begin_[i + 1])
  std::vector<std::pair<int, int>> parts_;
};

// Running allocations in a policy's preference order, for one pass, with
// their footprints in that order too: a search reads them front to back.
class Candidates {
 public:
  // See the top of this file. kEvery: every candidate offered is taken
  // (memoryless too), so a search's outcome depends only on each agent's
  // own candidates, and a ReachIndex finds it without walking them.
  // kMarked: a walk asks the policy (cumulatively, as kCumulative), and the
  // policy also keeps, before each search, which candidates that walk would
  // take marked (SetAdmitted), so a ReachIndex over the marked ones finds
  // the same choice (the fair share policy's reclaim budgets).
  enum class Admission { kMemoryless, kCumulative, kEvery, kMarked };

  Candidates(std::vector<int> order, const Footprints& where, Admission admission);
  int size() const { return static_cast<int>(order_.size()); }
  int at(int k) const { return order_[k]; }
  std::span<const std::pair<int, int>> parts(int k) const { return parts_.of(k); }
  bool memoryless() const { return admission_ == Admission::kMemoryless || admission_ == Admission::kEvery; }
  // Whether a search may use a ReachIndex (while no agent is hidden).
  bool indexed() const { return admission_ == Admission::kEvery || admission_ == Admission::kMarked; }
  // kMarked: whether a search would take position k if offered (always true
  // otherwise); SetAdmitted logs each change in flips().
  bool admitted(int k) const { return admitted_.empty() || admitted_[k]; }
  void SetAdmitted(int k, bool admitted) {
    if (admitted_[k] == admitted) return;
    admitted_[k] = admitted;
    flips_.push_back(k);
  }
  const std::vector<int>& flips() const { return flips_; }
  // The candidates on agent a: (position, slots there), ascending.
  std::span<const std::pair<int, int>> on_agent(int a) const {
    if (a + 1 >= static_cast<int>(agent_begin_.size())) return {};
    return {on_agent_.data() + agent_begin_[a], on_agent_.data() + agent_begin_[a + 1]};
  }
  // Whether position k is still linked for requests of `need`.
  bool Linked(int k, const Need& need) { return Links(need)[k] == k; }
  // The links for requests of `need` (next[k] == k: position k is linked);
  // valid until a link list for another need is made.
  const std::vector<int>& LinksFor(const Need& need) { return Links(need); }
  // Every position unlinked so far, for any need, in order (may repeat).
  const std::vector<int>& unlinked() const { return unlinked_; }
  // Slots the candidates before end() (gone ones too) occupy on agent a.
  int slots_on(int a) const { return a < static_cast<int>(slots_on_.size()) ? slots_on_[a] : 0; }
  // Where searches end: size() unless retired.
  int end() const { return end_; }
  // Candidates from position k on will never be admitted again in this pass
  // (a policy whose admission only narrows says so).
  void Retire(int k);

  // The first position at or after k still linked for requests of `need`
  // (size() when none; searches stop at end()).
  int Next(int k, const Need& need);
  // Unlinks position k for the rest of the pass.
  void Drop(int k);
  // Unlinks position k for requests of `need`.
  void DropFor(int k, const Need& need) {
    Unlink(Links(need), k);
    unlinked_.push_back(k);
  }

 private:
  // next[k] == k: linked; else a later position to look at.
  std::vector<int>& Links(const Need& need);
  static int Next(std::vector<int>& next, int k);
  static void Unlink(std::vector<int>& next, int k) {
    if (next[k] == k) next[k] = k + 1;
  }

  std::vector<int> order_;
  Footprints parts_;  // by position
  Admission admission_;
  int end_;
  std::vector<int> slots_on_;                  // per agent
  std::vector<int> agent_begin_;               // agent a's entries are on_agent_[agent_begin_[a], [a + 1])
  std::vector<std::pair<int, int>> on_agent_;  // (position, slots), by agent then position
  std::vector<int> unlinked_;                  // see unlinked()
  std::vector<char> admitted_;                 // kMarked: per position, see admitted()
  std::vector<int> flips_;                     // see flips()
  std::vector<int> next_;                      // for every need
  std::map<Need, std::vector<int>> next_for_;  // per request need, made from next_ when first asked
  Need last_need_;                             // the need asked last, and its links
  std::vector<int>* last_links_ = nullptr;
};

class VictimSearch {
 public:
  // kSkip: not in this search; kDrop: not in this search nor any later one
  // of the pass (the candidate is unlinked).
  enum class Verdict { kTake, kSkip, kDrop };
  struct Choice {
    std::vector<int> victims;  // running indexes, in the order taken
    Fit fit;                   // where the request goes once they stop
  };

  // `gone[i]`: running allocation i is stopping.
  VictimSearch(const PoolSlots& slots, const Footprints& where, const std::vector<char>& gone);

  // `admit(i)` is asked, in order, about each candidate before
  // candidates.end() that is not gone and would free a usable slot (and,
  // with memoryless admission, could help).
  std::optional<Choice> Find(const Need& need, PoolPolicy::Fit policy, Candidates& candidates,
                             const std::function<Verdict(int)>& admit);

 private:
  int Capacity(int a) const;
  // Of agents that all reach `slots`, the one the fit policy picks.
  int PickAgent(const std::vector<int>& agents, int slots, PoolPolicy::Fit policy) const;
  bool FreesUsable(std::span<const std::pair<int, int>> parts) const;
  // Usable, or hidden only for the searching request (enabled, not held).
  bool Open(int a) const;
  bool FreesOpen(std::span<const std::pair<int, int>> parts) const;
  bool CanHelp(const Candidates& candidates, int k, const Need& need, bool open) const;
  void Reset();
  // Find by a ReachIndex, for candidates admitted without condition while
  // no agent is hidden: the same choice as the walk, without the walk.
  std::optional<Choice> FindIndexed(const Need& need, PoolPolicy::Fit policy, Candidates& candidates);
  Choice SingleAgent(int slots, int agent, const std::vector<int>& taken) const;
  Choice WholeAgents(int slots, int shape, const std::vector<int>& taken) const;

  const PoolSlots& slots_;
  const Footprints& where_;
  const std::vector<char>& gone_;
  std::vector<int> freed_;                   // per agent, by the victims taken so far
  std::vector<int> touched_;                 // agents with freed_ > 0
  std::vector<std::vector<int>> made_idle_;  // per shape, agents the victims make idle, in order
  std::vector<int> touched_shapes_;
  std::map<Need, ReachIndex> indexes_;  // for the one Candidates admitting every candidate
};

}  // namespace ring::scheduling
