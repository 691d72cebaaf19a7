#include "master/notifications/log_trigger_limiter.h"

#include <iterator>

namespace ring {

bool LogTriggerLimiter::Admit(int64_t webhook, int64_t trial, size_t trigger, Time now) {
  const auto key = std::make_tuple(webhook, trial, trigger);
  if (auto it = last_.find(key); it != last_.end()) {
    if (now - it->second < interval_) return false;
    it->second = now;
    return true;
  }
  if (last_.size() >= max_keys_)
    for (auto it = last_.begin(); it != last_.end();)
      it = now - it->second >= interval_ ? last_.erase(it) : std::next(it);
  if (last_.size() >= max_keys_) return false;
  last_.emplace(key, now);
  return true;
}

}  // namespace ring
