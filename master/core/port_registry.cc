#include "master/core/port_registry.h"

namespace ring {

int PortRegistry::Acquire(const std::string& owner) {
  if (auto it = by_owner_.find(owner); it != by_owner_.end()) return it->second;
  for (int p = first_; p < first_ + count_; ++p) {
    if (used_.count(p)) continue;
    used_.insert(p);
    by_owner_[owner] = p;
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
