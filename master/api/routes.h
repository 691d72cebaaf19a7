#pragma once
// REST routes of the master, grouped by resource. Each Register* adds its
// routes to the router; handlers run on the connection's strand.
#include <cstdint>
#include <string>

#include "common/status.h"
#include "master/http/api_types.h"
#include "master/http/router.h"

namespace ring {

class Store;
class ExperimentController;

struct ApiContext {
  Store& store;
  ExperimentController& controller;
  std::string version;
};

void RegisterExperimentRoutes(Router& router, ApiContext& ctx);
void RegisterTrialRoutes(Router& router, ApiContext& ctx);
void RegisterClusterRoutes(Router& router, ApiContext& ctx);
void RegisterAllocationRoutes(Router& router, ApiContext& ctx);
void RegisterCheckpointRoutes(Router& router, ApiContext& ctx);
void RegisterSearcherRoutes(Router& router, ApiContext& ctx);
void RegisterRendezvousRoutes(Router& router, ApiContext& ctx);
void RegisterMetricRoutes(Router& router, ApiContext& ctx);
void RegisterPoolRoutes(Router& router, ApiContext& ctx);

// Helpers shared by the route files.
Result<int64_t> ParseId(const std::string& text, const std::string& what);
// An optional integer query parameter within [min, max].
Result<int64_t> QueryInt(const ApiRequest& req, const std::string& name, int64_t fallback, int64_t min,
                         int64_t max);
Result<nlohmann::json> ParseJsonBody(const ApiRequest& req);

}  // namespace ring
