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
// the fit policy picks), else on whole agents of one shape that would all be
// idle. Then only victims on the agents it will take are kept; for a one-agent
// fit, victims are spared again from the last taken backwards while the rest
// still make room. If no prefix of candidates makes it fit, nobody is chosen.
//
// A candidate that is gone (stopping already, or a victim of this pass) or
// that frees no usable slot (its agents held or disabled) stays so for the
// rest of the pass; it is unlinked from the candidate list, so a pass with
// many preemptions does not scan the same dead prefix again and again.
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "master/core/scheduling_placement.h"

namespace ring::scheduling {

// Running allocations in a policy's preference order, for one pass.
class Candidates {
 public:
  explicit Candidates(std::vector<int> order);
  int size() const { return static_cast<int>(order_.size()); }
  int at(int k) const { return order_[k]; }
  // The first position at or after k still linked (size() when none).
  int Next(int k);
  // Unlinks position k for the rest of the pass.
  void Drop(int k) { next_[k] = k + 1; }

 private:
  std::vector<int> order_;
  std::vector<int> next_;  // next_[k] == k: linked; else a later position to look at
};

class VictimSearch {
 public:
  enum class Verdict { kTake, kSkip, kStop };
  struct Choice {
    std::vector<int> victims;  // running indexes, in the order taken
    Fit fit;                   // where the request goes once they stop
  };

  // `where[i]`: the (agent index, slots) of running allocation i; an agent
  // index of -1 means an agent outside the pool. `gone[i]`: running
  // allocation i is stopping.
  VictimSearch(const PoolSlots& slots, const std::vector<std::vector<std::pair<int, int>>>& where,
               const std::vector<char>& gone);

  // `admit(i)` is asked, in order, about each candidate not gone that would
  // free a usable slot; kStop ends the search.
  std::optional<Choice> Find(int slots, PoolPolicy::Fit policy, Candidates& candidates,
                             const std::function<Verdict(int)>& admit);

 private:
  int Capacity(int a) const;
  void Reset();
  Choice SingleAgent(int slots, int agent, const std::vector<int>& taken) const;
  Choice WholeAgents(int slots, int shape, const std::vector<int>& taken) const;

  const PoolSlots& slots_;
  const std::vector<std::vector<std::pair<int, int>>>& where_;
  const std::vector<char>& gone_;
  std::vector<int> freed_;                   // per agent, by the victims taken so far
  std::vector<int> touched_;                 // agents with freed_ > 0
  std::vector<std::vector<int>> made_idle_;  // per shape, agents the victims make idle, in order
  std::vector<int> touched_shapes_;
};

}  // namespace ring::scheduling
