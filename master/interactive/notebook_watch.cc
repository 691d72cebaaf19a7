#include "master/interactive/notebook_watch.h"

#include <set>

#include <spdlog/spdlog.h>

namespace ring {

void NotebookWatch::Look(const std::vector<Target>& targets, Time now) {
  // The servers are asked outside the lock: a slow one must not hold up the tick.
  std::vector<std::optional<Result<JupyterState>>> answers;
  answers.reserve(targets.size());
  for (const auto& t : targets)
    answers.push_back(t.base_url.empty() ? std::nullopt : std::optional(probe_(t.base_url, t.token)));
  std::lock_guard lock(mu_);
  std::set<std::string> seen;
  for (size_t i = 0; i < targets.size(); ++i) {
    const Target& t = targets[i];
    seen.insert(t.allocation_id);
    auto it = watched_.find(t.allocation_id);
    if (it == watched_.end())
      it = watched_.emplace(t.allocation_id, Watched{NotebookIdleClock(t.type, t.timeout), t.proxied}).first;
    Watched& w = it->second;
    if (!answers[i] || !answers[i]->ok()) {
      if (answers[i])
        spdlog::debug("[notebooks] allocation {}: cannot ask its Jupyter: {}", t.allocation_id,
                      (*answers[i]).status().message());
      w.clock.Unknown();  // starting, or not answering: never idle
      continue;
    }
    w.clock.Observe(now, **answers[i]);
    // Under `activity`, a request through the proxy since the last look is activity too.
    if (t.type == NotebookIdleType::kActivity && t.proxied != w.proxied) w.clock.Unknown();
    w.proxied = t.proxied;
  }
  std::erase_if(watched_, [&](const auto& entry) { return !seen.contains(entry.first); });
}

std::optional<NotebookWatch::Time> NotebookWatch::IdleSince(const std::string& allocation_id) const {
  std::lock_guard lock(mu_);
  auto it = watched_.find(allocation_id);
  if (it == watched_.end()) return std::nullopt;
  return it->second.clock.idle_since();
}

}  // namespace ring
