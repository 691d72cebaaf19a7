#include "common/states.h"

#include <array>
#include <utility>

namespace ring {
namespace {

constexpr std::array<std::pair<RunState, std::string_view>, 8> kRunNames{{
    {RunState::kActive, "ACTIVE"},
    {RunState::kPaused, "PAUSED"},
    {RunState::kStoppingCompleted, "STOPPING_COMPLETED"},
    {RunState::kStoppingCanceled, "STOPPING_CANCELED"},
    {RunState::kStoppingError, "STOPPING_ERROR"},
    {RunState::kCompleted, "COMPLETED"},
    {RunState::kCanceled, "CANCELED"},
    {RunState::kError, "ERROR"},
}};

constexpr std::array<std::pair<AllocationState, std::string_view>, 6> kAllocNames{{
    {AllocationState::kPending, "PENDING"},
    {AllocationState::kAssigned, "ASSIGNED"},
    {AllocationState::kStarting, "STARTING"},
    {AllocationState::kRunning, "RUNNING"},
    {AllocationState::kTerminating, "TERMINATING"},
    {AllocationState::kTerminated, "TERMINATED"},
}};

constexpr std::array<std::pair<AgentState, std::string_view>, 3> kAgentNames{{
    {AgentState::kConnected, "connected"},
    {AgentState::kDisconnected, "disconnected"},
    {AgentState::kLost, "lost"},
}};

using R = RunState;
// from -> allowed targets. Stopping states drain into their terminal state;
// any live state may fail straight to ERROR or be canceled.
struct RunEdge {
  R from;
  R to;
};
constexpr RunEdge kRunEdges[] = {
    {R::kActive, R::kPaused},
    {R::kPaused, R::kActive},
    {R::kActive, R::kStoppingCompleted},
    {R::kActive, R::kStoppingCanceled},
    {R::kActive, R::kStoppingError},
    {R::kPaused, R::kStoppingCanceled},
    {R::kPaused, R::kStoppingError},
    {R::kActive, R::kCompleted},
    {R::kActive, R::kCanceled},
    {R::kActive, R::kError},
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

using A = AllocationState;
struct AllocEdge {
  A from;
  A to;
};
constexpr AllocEdge kAllocEdges[] = {
    {A::kPending, A::kAssigned},     {A::kAssigned, A::kStarting},   {A::kStarting, A::kRunning},
    {A::kAssigned, A::kRunning},     {A::kPending, A::kTerminated},  {A::kAssigned, A::kTerminating},
    {A::kStarting, A::kTerminating}, {A::kRunning, A::kTerminating}, {A::kAssigned, A::kTerminated},
    {A::kStarting, A::kTerminated},  {A::kRunning, A::kTerminated},  {A::kTerminating, A::kTerminated},
};

}  // namespace

std::string_view ToString(RunState s) {
  for (const auto& [state, name] : kRunNames)
    if (state == s) return name;
  return "UNKNOWN";
}

std::string_view ToString(AllocationState s) {
  for (const auto& [state, name] : kAllocNames)
    if (state == s) return name;
  return "UNKNOWN";
}

std::optional<RunState> ParseRunState(std::string_view s) {
  for (const auto& [state, name] : kRunNames)
    if (name == s) return state;
  return std::nullopt;
}

std::optional<AllocationState> ParseAllocationState(std::string_view s) {
  for (const auto& [state, name] : kAllocNames)
    if (name == s) return state;
  return std::nullopt;
}

std::string_view ToString(AgentState s) {
  for (const auto& [state, name] : kAgentNames)
    if (state == s) return name;
  return "unknown";
}

std::optional<AgentState> ParseAgentState(std::string_view s) {
  for (const auto& [state, name] : kAgentNames)
    if (name == s) return state;
  return std::nullopt;
}

bool IsTerminal(RunState s) {
  return s == R::kCompleted || s == R::kCanceled || s == R::kError;
}
bool IsTerminal(AllocationState s) {
  return s == A::kTerminated;
}

bool CanTransitionTrial(RunState from, RunState to) {
  return (from == RunState::kPaused && to == RunState::kCompleted) || CanTransition(from, to);
}

bool CanTransition(RunState from, RunState to) {
  for (const auto& e : kRunEdges)
    if (e.from == from && e.to == to) return true;
  return false;
}

bool CanTransition(AllocationState from, AllocationState to) {
  for (const auto& e : kAllocEdges)
    if (e.from == from && e.to == to) return true;
  return false;
}

}  // namespace ring
