#include "master/api/routes.h"
#include "master/core/experiment_controller.h"

namespace ring {

void RegisterClusterRoutes(Router& router, ApiContext& ctx) {
  router.AddSync("GET", "/api/v1/health", [&ctx](ApiRequest&) {
    return ApiResponse::Json({{"status", "ok"}, {"version", ctx.version}});
  });
  router.AddSync("GET", "/api/v1/agents", [&ctx](ApiRequest&) {
    auto agents = ctx.controller.AgentsJson();
    const auto total = agents.size();
    return ApiResponse::Json({{"agents", std::move(agents)}, {"total", total}});
  });
  router.AddSync("GET", "/api/v1/jobs", [&ctx](ApiRequest&) {
    auto jobs = ctx.controller.JobsJson();
    const auto total = jobs.size();
    return ApiResponse::Json({{"jobs", std::move(jobs)}, {"total", total}});
  });
}

}  // namespace ring
