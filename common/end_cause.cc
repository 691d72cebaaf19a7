#include "common/end_cause.h"

#include <array>
#include <utility>

namespace ring {
namespace {

constexpr std::array<std::pair<EndCause, std::string_view>, 13> kEndCauseNames{{
    {EndCause::kCompleted, "COMPLETED"},
    {EndCause::kFailed, "FAILED"},
    {EndCause::kGangMemberFailed, "GANG_MEMBER_FAILED"},
    {EndCause::kUserKill, "USER_KILL"},
    {EndCause::kPaused, "PAUSED"},
    {EndCause::kPreempted, "PREEMPTED"},
    {EndCause::kAgentLost, "AGENT_LOST"},
    {EndCause::kAgentRestarted, "AGENT_RESTARTED"},
    {EndCause::kInvalidHparams, "INVALID_HPARAMS"},
    {EndCause::kExitedEarly, "EXITED_EARLY"},
    {EndCause::kFencedOut, "FENCED_OUT"},
    {EndCause::kSearcherStopped, "SEARCHER_STOPPED"},
    {EndCause::kIdleTimeout, "IDLE_TIMEOUT"},
}};

}  // namespace

std::string_view ToString(EndCause c) {
  for (const auto& [cause, name] : kEndCauseNames)
    if (cause == c) return name;
  return "UNKNOWN";
}

std::string_view Describe(EndCause c) {
  switch (c) {
    case EndCause::kCompleted:
      return "exited with code 0";
    case EndCause::kFailed:
      return "failed";
    case EndCause::kGangMemberFailed:
      return "another rank failed";
    case EndCause::kUserKill:
      return "killed by user";
    case EndCause::kPaused:
      return "paused";
    case EndCause::kPreempted:
      return "preempted";
    case EndCause::kAgentLost:
      return "agent lost";
    case EndCause::kAgentRestarted:
      return "agent restarted: the process is gone";
    case EndCause::kInvalidHparams:
      return "invalid hyperparameters";
    case EndCause::kExitedEarly:
      return "exited without completing its searcher operation";
    case EndCause::kFencedOut:
      return "fenced out";
    case EndCause::kSearcherStopped:
      return "stopped by the searcher";
    case EndCause::kIdleTimeout:
      return "idle for its idle_timeout with no terminal attached";
  }
  return "unknown";
}

std::optional<EndCause> ParseEndCause(std::string_view s) {
  for (const auto& [cause, name] : kEndCauseNames)
    if (name == s) return cause;
  return std::nullopt;
}

}  // namespace ring
