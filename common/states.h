#pragma once
// Lifecycle states of experiments, trials and allocations, with their
// transition tables. A transition is persisted before anything acts on it.
#include <optional>
#include <string_view>

namespace ring {

// Experiments and trials share one state set (the contract).
enum class RunState {
  kActive,
  kPaused,
  kStoppingCompleted,
  kStoppingCanceled,
  kStoppingError,
  kCompleted,
  kCanceled,
  kError,
};

enum class AllocationState {
  kPending,
  kAssigned,
  kStarting,
  kRunning,
  kTerminating,
  kTerminated,
};

// An agent as the master sees it: connected; disconnected and inside its
// reconnect window (its slots still held); lost (the window passed).
enum class AgentState {
  kConnected,
  kDisconnected,
  kLost,
};

std::string_view ToString(RunState s);
std::string_view ToString(AllocationState s);
std::optional<RunState> ParseRunState(std::string_view s);
std::optional<AllocationState> ParseAllocationState(std::string_view s);
std::string_view ToString(AgentState s);  // "connected", "disconnected", "lost"
std::optional<AgentState> ParseAgentState(std::string_view s);

bool IsTerminal(RunState s);
bool IsTerminal(AllocationState s);

// True when the lifecycle allows moving from `from` to `to`. Staying in the
// same state is not a transition and returns false. No edge leaves an
// ended state: continuing a trial in place (Experiments::ContinueTrial,
// Trials::Reopen) is the one way out, outside this table.
bool CanTransition(RunState from, RunState to);
bool CanTransition(AllocationState from, AllocationState to);
// A trial's table is the experiments' with one more edge: a paused trial
// that waits for a promotion may be closed by its searcher (PAUSED ->
// COMPLETED), while an experiment always leaves PAUSED through activate,
// cancel or error.
bool CanTransitionTrial(RunState from, RunState to);

}  // namespace ring
