#pragma once
// Which running notebooks are idle, and since when: each look asks every
// notebook's Jupyter server (ProbeJupyter, or a fake in tests) and feeds its
// answer to that allocation's NotebookIdleClock; the lifecycle's tick ends a
// notebook idle for its idle_timeout (Tasks::EndIdle). Looks block on the
// network, so they run on a thread of their own, never the lifecycle's;
// thread-safe (mu_).
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "master/interactive/notebook_idle.h"

namespace ring {

class NotebookWatch {
 public:
  using Time = NotebookIdleClock::Time;
  using Probe = std::function<Result<JupyterState>(const std::string& base_url, const std::string& token)>;

  // One running notebook, as the lifecycle and the proxy know it.
  struct Target {
    std::string allocation_id;
    NotebookIdleType type = NotebookIdleType::kKernelsOrTerminals;
    std::chrono::seconds timeout{0};
    // http://<node>:<port>/proxy/<task>/ and the token it announced; empty
    // while it has announced nothing (Jupyter still starting): not idle.
    std::string base_url;
    std::string token;
    // When proxied traffic of the task last moved (ProxyActivity), if ever:
    // under `activity`, traffic since the last look is activity.
    std::optional<std::chrono::system_clock::time_point> proxied;
  };

  explicit NotebookWatch(Probe probe) : probe_(std::move(probe)) {}

  // One look at each target at `now`; a notebook no longer among them is forgotten.
  void Look(const std::vector<Target>& targets, Time now);
  // Since when the allocation's notebook has been idle, look after look;
  // nullopt while it is not (or was never looked at).
  std::optional<Time> IdleSince(const std::string& allocation_id) const;

 private:
  struct Watched {
    NotebookIdleClock clock;
    std::optional<std::chrono::system_clock::time_point> proxied;  // at the previous look
  };
  Probe probe_;
  mutable std::mutex mu_;  // guards watched_
  std::map<std::string, Watched> watched_;
};

}  // namespace ring
