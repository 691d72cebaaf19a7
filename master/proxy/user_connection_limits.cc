#include "master/proxy/user_connection_limits.h"

namespace ring {

UserConnectionLimits::Slot::~Slot() {
  if (!state_) return;
  std::lock_guard lock(state_->mu);
  auto it = state_->open.find(user_);
  if (it != state_->open.end() && --it->second == 0) state_->open.erase(it);
}

std::optional<UserConnectionLimits::Slot> UserConnectionLimits::Take(const std::string& user) {
  std::lock_guard lock(state_->mu);
  auto& n = state_->open[user];
  if (n >= state_->max_per_user) {
    if (n == 0) state_->open.erase(user);
    return std::nullopt;
  }
  ++n;
  return Slot(state_, user);
}

uint32_t UserConnectionLimits::open(const std::string& user) const {
  std::lock_guard lock(state_->mu);
  auto it = state_->open.find(user);
  return it == state_->open.end() ? 0 : it->second;
}

}  // namespace ring
