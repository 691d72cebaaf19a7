// The trial API: calls of trial processes, each naming its allocation and
// authorised by that allocation's token.
#include "master/api/routes.h"
#include "master/core/experiment_controller.h"

namespace ring {

void RegisterAllocationRoutes(Router& router, ApiContext& ctx) {
  UseAllocationTokens(router, ctx);
  router.Add("POST", "/api/v1/allocations/{id}/metrics", Access::kAllocation, [&ctx](ApiRequest& req) {
    return OffNetworkThread(ctx.metric_writes, [&ctx, &req] {
      auto body = ParseJsonBody(req);
      if (!body.ok()) return ApiResponse::Error(body.status());
      auto stored = ctx.controller.ReportMetrics(req.params[0], req.BearerToken(), *body);
      if (!stored.ok()) return ApiResponse::Error(stored.status());
      return ApiResponse::Json({{"stored", *stored}});
    });
  });
  router.AddSync("GET", "/api/v1/allocations/{id}/model_definition", Access::kAllocation,
                 [&ctx](ApiRequest& req) {
                   auto model = ctx.controller.ModelDefinition(req.params[0], req.BearerToken());
                   if (!model.ok()) return ApiResponse::Error(model.status());
                   ApiResponse r;
                   r.content_type = "application/gzip";
                   r.body = std::move(model).value();
                   return r;
                 });
}

}  // namespace ring
