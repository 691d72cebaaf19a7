#pragma once
// When each task's proxied traffic last moved (a request, a piece of a body
// or a WebSocket message either way), for whoever needs to know that a
// notebook is idle. Thread-safe (mu_): every proxied connection touches it,
// anyone may read it.
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>

namespace ring {

class ProxyActivity {
 public:
  using Clock = std::chrono::system_clock;
  void Touch(int64_t task_id, Clock::time_point now);
  // Nullopt when nothing went through the proxy for the task since the master started.
  std::optional<Clock::time_point> Last(int64_t task_id) const;
  void Forget(int64_t task_id);

 private:
  mutable std::mutex mu_;  // guards last_
  std::map<int64_t, Clock::time_point> last_;
};

}  // namespace ring
