#pragma once
// Why an allocation ended (or why the master stopped its ranks): decided on
// by code, stored in its own column; people read the detail text beside it.
#include <optional>
#include <string_view>

namespace ring {

enum class EndCause {
  kCompleted,         // every rank exited 0 on its own (or after acknowledging a stop)
  kFailed,            // a rank exited non-zero or was killed by a signal the master did not send
  kGangMemberFailed,  // stopped because another rank of its gang failed (kill reason only)
  kUserKill,          // the experiment was killed
  kPaused,            // the experiment was paused (left the queue, or ignored the stop and was killed)
  kPreempted,         // the scheduler or an operator took its slots and it ignored the stop
  kAgentLost,         // an agent did not come back within the reconnect window
  kAgentRestarted,    // an agent came back without the process
  kInvalidHparams,    // the trial said its hyperparameters are invalid
  kExitedEarly,       // exited 0 without completing its searcher operation
  kFencedOut,         // still running after its allocation ended (kill reason only)
  kSearcherStopped,   // the searcher asked the trial to stop (trial-driven contract); not a failure
  kIdleTimeout,       // an interactive task (a shell) was idle for its idle_timeout
};

std::string_view ToString(EndCause c);  // "COMPLETED", "USER_KILL", ...
std::optional<EndCause> ParseEndCause(std::string_view s);
// The words people read for it: "killed by user", "agent lost", ...
std::string_view Describe(EndCause c);

}  // namespace ring
