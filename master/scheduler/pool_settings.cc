#include "master/scheduler/pool_settings.h"

namespace ring {

std::vector<PoolSettings> DefaultPools() {
  return {PoolSettings{"default", "every agent that names no pool", "priority", true, "best"}};
}

}  // namespace ring
