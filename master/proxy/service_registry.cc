#include "master/proxy/service_registry.h"

#include <vector>

namespace ring {

void ServiceRegistry::Announce(AnnouncedService service) {
  std::lock_guard lock(mu_);
  // Each announcement sweeps the ended ones, so the table holds live tasks only.
  std::erase_if(services_, [this](const auto& s) { return !live_(s.second.allocation_id); });
  const int64_t task = service.task_id;
  services_[task] = std::move(service);
}

std::optional<AnnouncedService> ServiceRegistry::Lookup(int64_t task_id) {
  std::lock_guard lock(mu_);
  auto it = services_.find(task_id);
  if (it == services_.end()) return std::nullopt;
  if (!live_(it->second.allocation_id)) {
    services_.erase(it);
    return std::nullopt;
  }
  return it->second;
}

void ServiceRegistry::Forget(const std::string& allocation_id) {
  std::lock_guard lock(mu_);
  std::erase_if(services_, [&](const auto& s) { return s.second.allocation_id == allocation_id; });
}

size_t ServiceRegistry::size() const {
  std::lock_guard lock(mu_);
  return services_.size();
}

}  // namespace ring
