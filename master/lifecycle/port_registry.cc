#include "master/lifecycle/port_registry.h"

#include <random>

namespace ring {

PortRegistry::PortRegistry(int first, int count, int start) : first_(first), count_(count), next_(0) {
  if (count_ <= 0) return;
  if (start < 0) start = static_cast<int>(std::random_device{}() % static_cast<unsigned>(count_));
  next_ = start % count_;
}

int PortRegistry::Acquire(const std::string& owner) {
  if (auto it = by_owner_.find(owner); it != by_owner_.end()) return it->second;
  for (int i = 0; i < count_; ++i) {
    const int offset = (next_ + i) % count_;
    const int p = first_ + offset;
    if (used_.count(p)) continue;
    used_.insert(p);
    by_owner_[owner] = p;
    next_ = (offset + 1) % count_;
    return p;
  }
  return 0;
}

void PortRegistry::Release(const std::string& owner) {
  auto it = by_owner_.find(owner);
  if (it == by_owner_.end()) return;
  used_.erase(it->second);
  by_owner_.erase(it);
}

}  // namespace ring
