#include "common/states.h"

#include <gtest/gtest.h>

namespace ring {
namespace {

using R = RunState;
using A = AllocationState;

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
  EXPECT_FALSE(ParseRunState("active").has_value());
  EXPECT_FALSE(ParseAllocationState("DONE").has_value());
}

}  // namespace
}  // namespace ring
