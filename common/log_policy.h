#pragma once
// Determined's log_policies: a name, a regular expression matched against
// each line of a trial's output, and what a match does. Patterns use RE2
// (Go's syntax, as Determined's master does) and match in time linear in the
// line, whatever the pattern: a trial's output cannot make the master spin.
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/experiment_config.h"

namespace ring {

// A compiled pattern. Matches anywhere in the line (Go's MatchString).
class LogPattern {
 public:
  // The compiled pattern, or nullptr with `error` set to RE2's reason.
  static std::unique_ptr<LogPattern> Compile(const std::string& pattern, std::string& error);
  ~LogPattern();
  bool Matches(std::string_view line) const;

 private:
  struct Impl;
  explicit LogPattern(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The policies every trial gets unless its config names them: Determined's
// "CUDA OOM" and "ECC Error", which label a trial and do nothing else.
const std::vector<LogPolicy>& DefaultLogPolicies();

// The policies in force for a config's log_policies: the defaults, each
// replaced by a configured policy of the same name (one with no pattern
// turns it off), then the configured ones with other names, in order.
// Only policies with a pattern remain.
std::vector<LogPolicy> EffectiveLogPolicies(const std::vector<LogPolicy>& configured);

// How a matched policy is shown: its name, or its pattern when it has none.
std::string LogPolicyLabel(const LogPolicy& policy);

}  // namespace ring
