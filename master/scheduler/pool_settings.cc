#include "master/scheduler/pool_settings.h"

namespace ring {

std::vector<PoolSettings> DefaultPools() {
  return {PoolSettings{"default", "every agent that names no pool", "priority", true, "best"}};
}

}  // namespace ring

namespace ring {

bool MaySubmitTo(const PoolSettings& pool, const std::string& username, bool admin) {
  if (admin || pool.allowed_users.empty()) return true;
  return std::find(pool.allowed_users.begin(), pool.allowed_users.end(), username) !=
         pool.allowed_users.end();
}

}  // namespace ring
