#include "common/log_policy.h"

#include <re2/re2.h>

namespace ring {

const char* ToString(LogPolicyAction action) {
  switch (action) {
    case LogPolicy::Action::kCancelRetries:
      return "cancel_retries";
    case LogPolicy::Action::kExcludeNode:
      return "exclude_node";
    case LogPolicy::Action::kNone:
      break;
  }
  return "";
}

std::optional<LogPolicyAction> ParseLogPolicyAction(std::string_view text) {
  if (text == "cancel_retries") return LogPolicy::Action::kCancelRetries;
  if (text == "exclude_node") return LogPolicy::Action::kExcludeNode;
  if (text.empty()) return LogPolicy::Action::kNone;
  return std::nullopt;
}

struct LogPattern::Impl {
  explicit Impl(const std::string& pattern) : re(pattern, Options()) {}
  static RE2::Options Options() {
    RE2::Options o;
    o.set_log_errors(false);
    o.set_max_mem(1 << 20);  // a pattern needing more is refused, not slow
    return o;
  }
  RE2 re;
};

LogPattern::LogPattern(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LogPattern::~LogPattern() = default;

std::unique_ptr<LogPattern> LogPattern::Compile(const std::string& pattern, std::string& error) {
  auto impl = std::make_unique<Impl>(pattern);
  if (!impl->re.ok()) {
    error = impl->re.error();
    return nullptr;
  }
  return std::unique_ptr<LogPattern>(new LogPattern(std::move(impl)));
}

bool LogPattern::Matches(std::string_view line) const {
  return RE2::PartialMatch(line, impl_->re);
}

const std::vector<LogPolicy>& DefaultLogPolicies() {
  static const std::vector<LogPolicy> defaults = {
      {"CUDA OOM", ".*CUDA out of memory.*", LogPolicy::Action::kNone, 0},
      {"ECC Error", ".*uncorrectable ECC error encountered.*", LogPolicy::Action::kNone, 0},
  };
  return defaults;
}

std::vector<LogPolicy> EffectiveLogPolicies(const std::vector<LogPolicy>& configured) {
  std::vector<LogPolicy> out;
  std::vector<bool> used(configured.size(), false);
  for (const auto& d : DefaultLogPolicies()) {
    const LogPolicy* chosen = &d;
    for (size_t i = 0; i < configured.size(); ++i)
      if (!configured[i].name.empty() && configured[i].name == d.name) {
        chosen = &configured[i];  // the last of that name wins
        used[i] = true;
      }
    if (chosen->pattern) out.push_back(*chosen);
  }
  for (size_t i = 0; i < configured.size(); ++i) {
    if (used[i] || !configured[i].pattern) continue;
    // A later policy of the same name replaces an earlier one.
    bool later = false;
    for (size_t j = i + 1; j < configured.size() && !later; ++j)
      later = !configured[i].name.empty() && configured[j].name == configured[i].name;
    if (!later) out.push_back(configured[i]);
  }
  return out;
}

std::string LogPolicyLabel(const LogPolicy& policy) {
  return policy.name.empty() ? policy.pattern.value_or("") : policy.name;
}

}  // namespace ring
