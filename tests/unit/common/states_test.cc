// The lifecycle tables of experiments/trials and allocations. Every pair of
// states is checked against the full list of allowed edges below, so a new
// edge in common/states.cc must be added here on purpose.
#include "common/states.h"

#include <gtest/gtest.h>

#include <iterator>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace ring {
namespace {

using R = RunState;
using A = AllocationState;

const R kAllRun[] = {R::kActive,        R::kPaused,    R::kStoppingCompleted, R::kStoppingCanceled,
                     R::kStoppingError, R::kCompleted, R::kCanceled,          R::kError};
const A kAllAlloc[] = {A::kPending, A::kAssigned, A::kStarting, A::kRunning, A::kTerminating, A::kTerminated};

// ACTIVE <-> PAUSED; either may finish, or wind down through STOPPING_*
// (a completing run may still be canceled or fail); any live state may fail.
const std::set<std::pair<R, R>> kRunAllowed = {
    {R::kActive, R::kPaused},
    {R::kPaused, R::kActive},
    {R::kActive, R::kStoppingCompleted},
    {R::kActive, R::kStoppingCanceled},
    {R::kActive, R::kStoppingError},
    {R::kActive, R::kCompleted},
    {R::kActive, R::kCanceled},
    {R::kActive, R::kError},
    {R::kPaused, R::kStoppingCanceled},
    {R::kPaused, R::kStoppingError},
    {R::kPaused, R::kCanceled},
    {R::kPaused, R::kError},
    {R::kStoppingCompleted, R::kCompleted},
    {R::kStoppingCompleted, R::kStoppingCanceled},
    {R::kStoppingCompleted, R::kStoppingError},
    {R::kStoppingCompleted, R::kError},
    {R::kStoppingCanceled, R::kCanceled},
    {R::kStoppingCanceled, R::kError},
    {R::kStoppingError, R::kError},
};

// PENDING -> ASSIGNED -> STARTING -> RUNNING -> TERMINATING -> TERMINATED,
// with ASSIGNED -> RUNNING (the start report can be lost) and an end from any
// live state.
const std::set<std::pair<A, A>> kAllocAllowed = {
    {A::kPending, A::kAssigned},    {A::kAssigned, A::kStarting},    {A::kStarting, A::kRunning},
    {A::kAssigned, A::kRunning},    {A::kRunning, A::kTerminating},  {A::kTerminating, A::kTerminated},
    {A::kPending, A::kTerminated},  {A::kAssigned, A::kTerminating}, {A::kStarting, A::kTerminating},
    {A::kAssigned, A::kTerminated}, {A::kStarting, A::kTerminated},  {A::kRunning, A::kTerminated},
};

// True when some path of allowed edges leads from `from` to a terminal state.
template <typename S, size_t N>
bool ReachesTerminal(S from, const S (&all)[N]) {
  std::set<S> seen{from};
  std::vector<S> todo{from};
  while (!todo.empty()) {
    const S s = todo.back();
    todo.pop_back();
    if (IsTerminal(s)) return true;
    for (S to : all)
      if (CanTransition(s, to) && seen.insert(to).second) todo.push_back(to);
  }
  return false;
}

std::string Edge(std::string_view from, std::string_view to) {
  return std::string(from) + " -> " + std::string(to);
}

TEST(StatesTest, RunStateTableIsExactlyTheAllowedEdges) {
  int allowed = 0;
  for (R from : kAllRun) {
    for (R to : kAllRun) {
      const bool expected = kRunAllowed.count({from, to}) > 0;
      EXPECT_EQ(CanTransition(from, to), expected) << Edge(ToString(from), ToString(to));
      allowed += CanTransition(from, to) ? 1 : 0;
    }
  }
  EXPECT_EQ(allowed, static_cast<int>(kRunAllowed.size()));
}

TEST(StatesTest, RunStateForbiddenEdges) {
  for (R s : kAllRun)
    EXPECT_FALSE(CanTransition(s, s)) << "staying in " << ToString(s) << " is not a transition";
  for (R terminal : {R::kCompleted, R::kCanceled, R::kError})
    for (R to : kAllRun) EXPECT_FALSE(CanTransition(terminal, to)) << Edge(ToString(terminal), ToString(to));
  // Winding down is one way, and does not change its mind towards success.
  for (R stopping : {R::kStoppingCompleted, R::kStoppingCanceled, R::kStoppingError}) {
    EXPECT_FALSE(CanTransition(stopping, R::kActive));
    EXPECT_FALSE(CanTransition(stopping, R::kPaused));
  }
  EXPECT_FALSE(CanTransition(R::kStoppingCanceled, R::kCompleted));
  EXPECT_FALSE(CanTransition(R::kStoppingError, R::kCompleted));
  EXPECT_FALSE(CanTransition(R::kStoppingError, R::kCanceled));
  EXPECT_FALSE(CanTransition(R::kPaused, R::kCompleted));
  EXPECT_FALSE(CanTransition(R::kPaused, R::kStoppingCompleted));
  // Only resuming re-activates, only an active run pauses.
  for (R from : kAllRun) {
    if (from != R::kPaused) {
      EXPECT_FALSE(CanTransition(from, R::kActive)) << ToString(from);
    }
    if (from != R::kActive) {
      EXPECT_FALSE(CanTransition(from, R::kPaused)) << ToString(from);
    }
  }
}

TEST(StatesTest, AllocationTableIsExactlyTheAllowedEdges) {
  int allowed = 0;
  for (A from : kAllAlloc) {
    for (A to : kAllAlloc) {
      const bool expected = kAllocAllowed.count({from, to}) > 0;
      EXPECT_EQ(CanTransition(from, to), expected) << Edge(ToString(from), ToString(to));
      allowed += CanTransition(from, to) ? 1 : 0;
    }
  }
  EXPECT_EQ(allowed, static_cast<int>(kAllocAllowed.size()));
}

TEST(StatesTest, AllocationForbiddenEdges) {
  for (A s : kAllAlloc)
    EXPECT_FALSE(CanTransition(s, s)) << "staying in " << ToString(s) << " is not a transition";
  for (A to : kAllAlloc) EXPECT_FALSE(CanTransition(A::kTerminated, to)) << Edge("TERMINATED", ToString(to));
  // Nothing goes backwards.
  for (size_t i = 0; i < std::size(kAllAlloc); ++i)
    for (size_t j = 0; j < i; ++j)
      EXPECT_FALSE(CanTransition(kAllAlloc[i], kAllAlloc[j]))
          << Edge(ToString(kAllAlloc[i]), ToString(kAllAlloc[j]));
  EXPECT_FALSE(CanTransition(A::kPending, A::kRunning));  // never without an assignment
  EXPECT_FALSE(CanTransition(A::kPending, A::kStarting));
  EXPECT_FALSE(CanTransition(A::kPending, A::kTerminating));  // nothing to terminate yet
  // Every live allocation can be ended at once (agent lost, trial killed).
  for (A from : kAllAlloc)
    if (!IsTerminal(from)) {
      EXPECT_TRUE(CanTransition(from, A::kTerminated)) << ToString(from);
    }
}

TEST(StatesTest, TerminalStates) {
  for (R s : kAllRun) {
    const bool terminal = s == R::kCompleted || s == R::kCanceled || s == R::kError;
    EXPECT_EQ(IsTerminal(s), terminal) << ToString(s);
  }
  for (A s : kAllAlloc) EXPECT_EQ(IsTerminal(s), s == A::kTerminated) << ToString(s);
  // Every live state can end; every non-terminal state has a way out and
  // every terminal one has none.
  for (R s : kAllRun)
    if (!IsTerminal(s)) {
      EXPECT_TRUE(ReachesTerminal(s, kAllRun)) << ToString(s) << " can never end";
    }
  for (A s : kAllAlloc)
    if (!IsTerminal(s)) {
      EXPECT_TRUE(ReachesTerminal(s, kAllAlloc)) << ToString(s) << " can never end";
    }
  for (R from : kAllRun) {
    bool out = false;
    for (R to : kAllRun) out = out || CanTransition(from, to);
    EXPECT_EQ(out, !IsTerminal(from)) << ToString(from);
  }
  for (A from : kAllAlloc) {
    bool out = false;
    for (A to : kAllAlloc) out = out || CanTransition(from, to);
    EXPECT_EQ(out, !IsTerminal(from)) << ToString(from);
  }
}

TEST(StatesTest, NamesRoundTrip) {
  std::set<std::string_view> names;
  for (R s : kAllRun) {
    EXPECT_EQ(ParseRunState(ToString(s)), s) << ToString(s);
    names.insert(ToString(s));
  }
  EXPECT_EQ(names.size(), std::size(kAllRun));
  names.clear();
  for (A s : kAllAlloc) {
    EXPECT_EQ(ParseAllocationState(ToString(s)), s) << ToString(s);
    names.insert(ToString(s));
  }
  EXPECT_EQ(names.size(), std::size(kAllAlloc));
  // The contract's spelling.
  EXPECT_EQ(ToString(R::kActive), "ACTIVE");
  EXPECT_EQ(ToString(R::kStoppingCanceled), "STOPPING_CANCELED");
  EXPECT_EQ(ToString(R::kError), "ERROR");
  EXPECT_EQ(ToString(A::kPending), "PENDING");
  EXPECT_EQ(ToString(A::kTerminated), "TERMINATED");
}

TEST(StatesTest, UnknownNamesAreNotParsed) {
  for (const char* name :
       {"", "active", "Active", " ACTIVE", "ACTIVE ", "STOPPING", "DONE", "PENDING", "RUNNING"})
    EXPECT_FALSE(ParseRunState(name).has_value()) << name;
  for (const char* name : {"", "pending", "Pending", "ACTIVE", "TERMINATE", "TERMINATED\n", "DONE"})
    EXPECT_FALSE(ParseAllocationState(name).has_value()) << name;
}

}  // namespace
}  // namespace ring
