#pragma once
// What a matched log policy does (experiment config `log_policies[].action`).
#include <optional>
#include <string_view>

namespace ring {

enum class LogPolicyAction {
  kNone,           // a label only: the trial shows the policy's name
  kCancelRetries,  // a failure of the trial is final, whatever restarts it has left
  kExcludeNode,    // the trial's later allocations avoid the node that printed the line
};

const char* ToString(LogPolicyAction action);  // "cancel_retries", "exclude_node", "" for none
std::optional<LogPolicyAction> ParseLogPolicyAction(std::string_view text);

}  // namespace ring
