#include "master/lifecycle/log_policies.h"

#include <algorithm>

#include <spdlog/spdlog.h>

namespace ring {
namespace {

constexpr size_t kStoredLineBytes = 1024;

// At most kStoredLineBytes, cut before a UTF-8 continuation byte.
std::string Excerpt(const std::string& line) {
  if (line.size() <= kStoredLineBytes) return line;
  size_t end = kStoredLineBytes;
  while (end > 0 && (static_cast<unsigned char>(line[end]) & 0xC0) == 0x80) --end;
  return line.substr(0, end);
}

}  // namespace

LogPolicies::LogPolicies(Store& store, ExperimentSettings& settings) : store_(store), settings_(settings) {}

void LogPolicies::TrialMatches::Add(const std::string& policy, LogPolicyAction action,
                                    const std::string& node) {
  seen.emplace(policy, node);
  if (action == LogPolicyAction::kCancelRetries) retries_canceled = true;
  if (action == LogPolicyAction::kExcludeNode) {
    auto at = std::lower_bound(excluded.begin(), excluded.end(), node);
    if (at == excluded.end() || *at != node) excluded.insert(at, node);
  }
}

const std::vector<LogPolicies::Compiled>& LogPolicies::PoliciesOf(int64_t experiment_id) {
  auto it = compiled_.find(experiment_id);
  if (it != compiled_.end()) return it->second;
  std::vector<Compiled> out;
  if (const ExperimentConfig* config = settings_.Config(experiment_id)) {
    for (const auto& policy : EffectiveLogPolicies(config->log_policies)) {
      std::string error;
      auto pattern = LogPattern::Compile(*policy.pattern, error);
      if (!pattern) {  // checked at submit; a config stored by an older master may differ
        spdlog::warn("[trials] experiment {}: log policy \"{}\" is not a valid pattern: {}", experiment_id,
                     LogPolicyLabel(policy), error);
        continue;
      }
      out.push_back({LogPolicyLabel(policy), policy.action, std::move(pattern)});
    }
  }
  return compiled_.emplace(experiment_id, std::move(out)).first->second;
}

LogPolicies::TrialMatches& LogPolicies::MatchesOf(int64_t trial_id) {
  auto it = trials_.find(trial_id);
  if (it != trials_.end()) return it->second;
  TrialMatches matches;
  if (auto stored = store_.ListLogPolicyMatches(trial_id); stored.ok())
    for (const auto& m : *stored) matches.Add(m.policy, m.action, m.node);
  else
    spdlog::error("[trials] trial {}: cannot read its log policy matches: {}", trial_id,
                  stored.status().message());
  return trials_.emplace(trial_id, std::move(matches)).first->second;
}

void LogPolicies::OnLines(const LiveAllocation& alloc, const std::string& node,
                          const std::vector<LogRecord>& lines) {
  const auto& policies = PoliciesOf(alloc.experiment_id);
  if (policies.empty() || lines.empty()) return;
  TrialMatches& matches = MatchesOf(alloc.trial_id());
  for (const auto& policy : policies) {
    if (matches.seen.count({policy.label, node})) continue;  // one match per node is enough
    for (const auto& line : lines) {
      if (!policy.pattern->Matches(line.line)) continue;
      LogPolicyMatch m{alloc.trial_id(), policy.label, policy.action,      node,
                       alloc.record.id,  line.rank,    Excerpt(line.line), {}};
      if (auto added = store_.AddLogPolicyMatch(m); !added.ok()) {
        spdlog::error("[trials] trial {}: cannot store a match of log policy \"{}\": {}", m.trial_id,
                      m.policy, added.status().message());
        break;  // not kept in memory either: a later line tries again
      }
      matches.Add(policy.label, policy.action, node);
      spdlog::info("[trials] trial {}: log policy \"{}\" ({}) matched a line of rank {} on {}", m.trial_id,
                   m.policy, policy.action == LogPolicyAction::kNone ? "label" : ToString(policy.action),
                   m.rank, node);
      break;
    }
  }
}

bool LogPolicies::HasAction(int64_t experiment_id, LogPolicyAction action) {
  const auto& policies = PoliciesOf(experiment_id);
  return std::any_of(policies.begin(), policies.end(), [&](const Compiled& p) { return p.action == action; });
}

bool LogPolicies::RetriesCanceled(int64_t experiment_id, int64_t trial_id) {
  return HasAction(experiment_id, LogPolicyAction::kCancelRetries) && MatchesOf(trial_id).retries_canceled;
}

const std::vector<std::string>& LogPolicies::ExcludedNodes(int64_t experiment_id, int64_t trial_id) {
  static const std::vector<std::string> kNone;
  if (!HasAction(experiment_id, LogPolicyAction::kExcludeNode)) return kNone;
  return MatchesOf(trial_id).excluded;
}

void LogPolicies::Forget(int64_t trial_id) {
  trials_.erase(trial_id);
}

}  // namespace ring
