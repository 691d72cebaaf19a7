#pragma once
// How often a TASK_LOG trigger may fire: at most one event per (webhook,
// trial, trigger) per interval (a minute), so a trial printing a matching
// line in a loop sends one event a minute, not thousands. Pure (time passed
// in); bounded: past max_keys remembered triples, the stale ones are
// dropped, and while it is still full new triples are refused.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <tuple>

namespace ring {

class LogTriggerLimiter {
 public:
  using Time = std::chrono::steady_clock::time_point;
  explicit LogTriggerLimiter(std::chrono::milliseconds interval = std::chrono::minutes(1),
                             size_t max_keys = 100000)
      : interval_(interval), max_keys_(max_keys) {}

  // True when trigger `trigger` of `webhook` may fire for `trial` at `now`
  // (and remembers that it did).
  bool Admit(int64_t webhook, int64_t trial, size_t trigger, Time now);
  size_t size() const { return last_.size(); }

 private:
  std::chrono::milliseconds interval_;
  size_t max_keys_;
  std::map<std::tuple<int64_t, int64_t, size_t>, Time> last_;
};

}  // namespace ring
