#include "common/states.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace ring {
namespace {

using R = RunState;
using A = AllocationState;

const std::vector<R> kAllRun = {R::kActive,        R::kPaused,    R::kStoppingCompleted, R::kStoppingCanceled,
                                R::kStoppingError, R::kCompleted, R::kCanceled,          R::kError};
const std::vector<A> kAllAlloc = {A::kPending, A::kAssigned,    A::kStarting,
                                  A::kRunning, A::kTerminating, A::kTerminated};

template <typename S>
bool ReachesTerminal(S from, const std::vector<S>& all) {
  std::set<S> seen{from};
  std::vector<S> todo{from};
  while (!todo.empty()) {
    S s = todo.back();
    todo.pop_back();
    if (IsTerminal(s)) return true;
    for (S to : all)
      if (CanTransition(s, to) && seen.insert(to).second) todo.push_back(to);
  }
  return false;
}

TEST(StatesTest, RunStateEdges) {
  EXPECT_TRUE(CanTransition(R::kActive, R::kPaused));
  EXPECT_TRUE(CanTransition(R::kPaused, R::kActive));
  EXPECT_TRUE(CanTransition(R::kActive, R::kCompleted));
  EXPECT_TRUE(CanTransition(R::kActive, R::kStoppingCanceled));
  EXPECT_TRUE(CanTransition(R::kStoppingCanceled, R::kCanceled));
  EXPECT_TRUE(CanTransition(R::kStoppingCompleted, R::kCompleted));
  EXPECT_TRUE(CanTransition(R::kStoppingError, R::kError));
  EXPECT_TRUE(CanTransition(R::kPaused, R::kCanceled));
  EXPECT_FALSE(CanTransition(R::kActive, R::kActive));  // staying is not a transition
  EXPECT_FALSE(CanTransition(R::kStoppingCanceled, R::kActive));
  EXPECT_FALSE(CanTransition(R::kStoppingCanceled, R::kCompleted));
  for (R terminal : {R::kCompleted, R::kCanceled, R::kError})
    for (R to : {R::kActive, R::kPaused, R::kStoppingCompleted, R::kStoppingCanceled, R::kStoppingError,
                 R::kCompleted, R::kCanceled, R::kError})
      EXPECT_FALSE(CanTransition(terminal, to)) << ToString(terminal) << " -> " << ToString(to);
}

TEST(StatesTest, AllocationStateEdges) {
  const std::vector<std::pair<A, A>> allowed = {
      {A::kPending, A::kAssigned},    {A::kAssigned, A::kStarting},      {A::kStarting, A::kRunning},
      {A::kRunning, A::kTerminating}, {A::kTerminating, A::kTerminated}, {A::kRunning, A::kTerminated},
      {A::kPending, A::kTerminated}};
  for (auto [from, to] : allowed)
    EXPECT_TRUE(CanTransition(from, to)) << ToString(from) << " -> " << ToString(to);
  EXPECT_FALSE(CanTransition(A::kRunning, A::kStarting));
  EXPECT_FALSE(CanTransition(A::kRunning, A::kPending));
  EXPECT_FALSE(CanTransition(A::kPending, A::kRunning));
  for (A to : {A::kPending, A::kAssigned, A::kStarting, A::kRunning, A::kTerminating, A::kTerminated})
    EXPECT_FALSE(CanTransition(A::kTerminated, to));
}

// Properties of the whole run-state table, checked edge by edge.
TEST(StatesTest, RunStateTableInvariants) {
  int edges = 0;
  for (R from : kAllRun) {
    if (!IsTerminal(from)) {
      EXPECT_TRUE(ReachesTerminal(from, kAllRun)) << ToString(from) << " can never end";
    }
    for (R to : kAllRun) {
      if (!CanTransition(from, to)) continue;
      ++edges;
      const std::string edge = std::string(ToString(from)) + " -> " + std::string(ToString(to));
      EXPECT_NE(from, to) << edge;
      EXPECT_FALSE(IsTerminal(from)) << edge;
      if (to == R::kActive) {  // only resuming re-activates
        EXPECT_EQ(from, R::kPaused) << edge;
      }
      if (to == R::kPaused) {
        EXPECT_EQ(from, R::kActive) << edge;
      }
      if (from == R::kStoppingError) {  // an error cannot be downgraded
        EXPECT_EQ(to, R::kError) << edge;
      }
      if (from == R::kStoppingCanceled) {
        EXPECT_TRUE(to == R::kCanceled || to == R::kError) << edge;
      }
    }
  }
  EXPECT_GE(edges, 12);
  EXPECT_TRUE(CanTransition(R::kStoppingCompleted, R::kStoppingCanceled));  // kill while winding down
  EXPECT_TRUE(CanTransition(R::kPaused, R::kStoppingCanceled));
  EXPECT_FALSE(CanTransition(R::kPaused, R::kStoppingCompleted));
}

// Allocations only move forward, and every live one can be ended.
TEST(StatesTest, AllocationStateTableInvariants) {
  for (size_t i = 0; i < kAllAlloc.size(); ++i) {
    const A from = kAllAlloc[i];
    if (!IsTerminal(from)) {
      EXPECT_TRUE(ReachesTerminal(from, kAllAlloc)) << ToString(from);
      EXPECT_TRUE(CanTransition(from, A::kTerminated)) << ToString(from) << " cannot end at once";
    }
    for (size_t j = 0; j <= i; ++j)
      EXPECT_FALSE(CanTransition(from, kAllAlloc[j])) << ToString(from) << " -> " << ToString(kAllAlloc[j]);
  }
  EXPECT_FALSE(CanTransition(A::kTerminating, A::kRunning));
  EXPECT_FALSE(CanTransition(A::kPending, A::kTerminating));  // nothing runs yet: end directly
}

TEST(StatesTest, TerminalStates) {
  EXPECT_TRUE(IsTerminal(R::kCompleted));
  EXPECT_TRUE(IsTerminal(R::kCanceled));
  EXPECT_TRUE(IsTerminal(R::kError));
  EXPECT_FALSE(IsTerminal(R::kStoppingError));
  EXPECT_FALSE(IsTerminal(R::kPaused));
  EXPECT_TRUE(IsTerminal(A::kTerminated));
  EXPECT_FALSE(IsTerminal(A::kTerminating));
}

TEST(StatesTest, NamesRoundTrip) {
  for (R s : {R::kActive, R::kPaused, R::kStoppingCompleted, R::kStoppingCanceled, R::kStoppingError,
              R::kCompleted, R::kCanceled, R::kError})
    EXPECT_EQ(ParseRunState(ToString(s)), s);
  for (A s : {A::kPending, A::kAssigned, A::kStarting, A::kRunning, A::kTerminating, A::kTerminated})
    EXPECT_EQ(ParseAllocationState(ToString(s)), s);
  EXPECT_EQ(ToString(R::kStoppingCanceled), "STOPPING_CANCELED");
  std::set<std::string_view> names;
  for (R s : kAllRun) names.insert(ToString(s));
  for (A s : kAllAlloc) names.insert(ToString(s));
  EXPECT_EQ(names.size(), kAllRun.size() + kAllAlloc.size());  // every name is distinct
  EXPECT_EQ(ToString(A::kTerminated), "TERMINATED");
  EXPECT_FALSE(ParseRunState("").has_value());
  EXPECT_FALSE(ParseRunState("RUNNING").has_value());  // an allocation state, not a run state
  EXPECT_FALSE(ParseRunState("active").has_value());
  EXPECT_FALSE(ParseAllocationState("DONE").has_value());
}

}  // namespace
}  // namespace ring
