#pragma once
// Where a victim search of one need would stop, without walking the
// candidates before that point. For candidates admitted without condition
// (Candidates::Admission::kEvery, the priority policy) a search takes every
// candidate in order until one brings some usable agent to the request's
// slots, or brings enough agents of one shape to idle for a whole-agent fit.
// Which candidate that is depends only on each agent's own candidates: per
// usable agent, the position at which its free, leaving and freed slots
// first reach the need ("reach"), or its total ("idle"). This index keeps
// those positions in ordered sets of positions (IndexSet, with a count of
// agents per position), so a search costs about the agents it looks at,
// instead of every candidate before it.
//
// Kept up to date from what PoolSlots and Candidates log (agents whose free,
// leaving, held or hidden state changed; positions unlinked), read at each
// Find. Candidates a walk would skip are left out the same way: gone ones,
// those a kMarked policy marks not admitted (Candidates::flips() logs the
// changes), and those unlinked for this need (a walk unlinks them when they cannot
// help, see scheduling_preemption.h). One index per need, owned by the
// pass's VictimSearch; used only while no agent is hidden (a restricted
// request walks), so what it leaves out is exactly what a walk would.
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "master/scheduler/index_set.h"
#include "master/scheduler/scheduling_placement.h"

namespace ring::scheduling {

class Candidates;

class ReachIndex {
 public:
  static constexpr int kNever = std::numeric_limits<int>::max();

  // Where the walk stops: at the candidate in `position`, with `agents`
  // reaching the need there (shape < 0), or, for a whole-agent fit in
  // `shape`, the agents of that shape made idle by then.
  struct Stop {
    int position = kNever;
    int shape = -1;
    std::vector<int> agents;
  };

  // `slots`, `gone` and `candidates` must outlive the index.
  ReachIndex(const PoolSlots& slots, const std::vector<char>& gone, Candidates& candidates, const Need& need);

  // Where a search of the need stops now; nullopt if it would take every
  // candidate before candidates.end() and not fit.
  std::optional<Stop> Find();
  // The slots the candidates up to `position` (included) free on agent a,
  // as a walk to there would count them; appends the positions of those
  // candidates to `positions` when given.
  int Freed(int a, int position, std::vector<int>* positions);

 private:
  // The walk's positions for agent a: (reach, idle), kNever when not.
  std::pair<int, int> PositionsOf(int a);
  void Update(int a);
  void Sync();
  // Appends the agents (of `shape` unless it is -1) whose key in `at` is
  // `position`: some of those of the candidate there, ascending.
  void AgentsAt(int position, const std::vector<int>& at, int shape, std::vector<int>& agents) const;
  // Positions with a count of agents each.
  struct Positions {
    IndexSet set;
    std::vector<int> count;  // per position
    int agents = 0;          // the sum of count
    void Add(int k) {
      ++agents;
      if (count[k]++ == 0) set.insert(k);
    }
    void Remove(int k) {
      --agents;
      if (--count[k] == 0) set.erase(k);
    }
  };

  const PoolSlots& slots_;
  const std::vector<char>& gone_;
  Candidates& candidates_;
  const Need need_;
  std::vector<char> divides_;      // per shape: a whole-agent fit of the need may take it
  std::vector<int> reach_at_;      // per agent: its key in reach_, or kNever
  std::vector<int> idle_at_;       // per agent: its key in idle_[shape], or kNever
  Positions reach_;                // reach positions of usable agents of >= slots
  std::vector<Positions> idle_;    // per dividing shape: idle positions
  size_t changes_seen_ = 0;        // read so far of PoolSlots::changes()
  size_t unlinked_seen_ = 0;       // of Candidates::unlinked()
  size_t flips_seen_ = 0;          // of Candidates::flips()
  std::vector<int> seen_in_sync_;  // per agent: the sync that last updated it
  int sync_ = 0;
};

}  // namespace ring::scheduling
