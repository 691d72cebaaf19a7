#include "master/api/routes.h"
#include "master/core/experiment_controller.h"
#include "master/core/json_fields.h"

namespace ring {

void RegisterClusterRoutes(Router& router, ApiContext& ctx) {
  router.AddSync("GET", "/api/v1/health", Access::kPublic, [&ctx](ApiRequest&) {
    return ApiResponse::Json({{"status", "ok"}, {"version", ctx.version}});
  });
  router.AddSync("GET", "/api/v1/agents", Access::kUser, [&ctx](ApiRequest&) {
    auto agents = ctx.controller.AgentsJson();
    const auto total = agents.size();
    return ApiResponse::Json({{"agents", std::move(agents)}, {"total", total}});
  });
  router.AddSync("GET", "/api/v1/jobs", Access::kUser, [&ctx](ApiRequest&) {
    auto jobs = ctx.controller.JobsJson();
    const auto total = jobs.size();
    return ApiResponse::Json({{"jobs", std::move(jobs)}, {"total", total}});
  });
  // {"drain": true}: running work finishes; otherwise it is preempted.
  router.AddSync("POST", "/api/v1/agents/{id}/disable", Access::kAdmin, [&ctx](ApiRequest& req) {
    bool drain = false;
    if (!req.body.empty()) {
      auto body = ParseJsonBody(req);
      if (!body.ok()) return ApiResponse::Error(body.status());
      if (!body->is_object() || (body->contains("drain") && !(*body)["drain"].is_boolean()))
        return ApiResponse::Error(InvalidArgument("body must be {\"drain\": true|false}"));
      if (Status s = CheckKnownFields(*body, {"drain"}, "the request body"); !s.ok())
        return ApiResponse::Error(s);
      drain = body->value("drain", false);
    }
    if (Status s = ctx.controller.DisableAgent(req.params[0], drain); !s.ok()) return ApiResponse::Error(s);
    return ApiResponse::Json({{"id", req.params[0]}, {"enabled", false}, {"draining", drain}});
  });
  router.AddSync("POST", "/api/v1/agents/{id}/enable", Access::kAdmin, [&ctx](ApiRequest& req) {
    if (Status s = ctx.controller.EnableAgent(req.params[0]); !s.ok()) return ApiResponse::Error(s);
    return ApiResponse::Json({{"id", req.params[0]}, {"enabled", true}, {"draining", false}});
  });
}

}  // namespace ring
