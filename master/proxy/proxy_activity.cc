#include "master/proxy/proxy_activity.h"

namespace ring {

void ProxyActivity::Touch(int64_t task_id, Clock::time_point now) {
  std::lock_guard lock(mu_);
  auto& last = last_[task_id];
  if (now > last) last = now;
}

std::optional<ProxyActivity::Clock::time_point> ProxyActivity::Last(int64_t task_id) const {
  std::lock_guard lock(mu_);
  auto it = last_.find(task_id);
  if (it == last_.end()) return std::nullopt;
  return it->second;
}

void ProxyActivity::Forget(int64_t task_id) {
  std::lock_guard lock(mu_);
  last_.erase(task_id);
}

}  // namespace ring
