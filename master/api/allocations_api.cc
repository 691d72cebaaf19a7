// The trial API: calls of trial processes, each naming its allocation and
// authorised by that allocation's token.
#include <utility>  // before Asio

#include <spdlog/spdlog.h>
#include <boost/asio/awaitable.hpp>

#include "master/api/commands.h"
#include "master/api/routes.h"
#include "master/lifecycle/lifecycle.h"
#include "master/store/model_definition_stream.h"
#include "master/store/store.h"

namespace ring {

void RegisterAllocationRoutes(Router& router, ApiContext& ctx) {
  UseAllocationTokens(router, ctx);
  // The reports are committed off the network threads (sharing a group
  // commit with other requests), then what they move — progress, best
  // validation — is recorded on the lifecycle's thread; answered after both.
  router.Add("POST", "/api/v1/allocations/{id}/metrics", Access::kAllocation,
             [&ctx](ApiRequest& req) -> boost::asio::awaitable<ApiResponse> {
               auto holder = ctx.lifecycle.tokens().AuthorizeTrial(req.params[0], req.BearerToken());
               if (!holder.ok()) co_return ApiResponse::Error(holder.status());
               std::vector<MetricReport> reports;
               int64_t stored = 0;
               ApiResponse written = co_await OffNetworkThread(ctx.metric_writes, [&] {
                 auto body = ParseJsonBody(req);
                 if (!body.ok()) return ApiResponse::Error(body.status());
                 auto decoded = DecodeReports(*body, holder->trial_id, req.params[0]);
                 if (!decoded.ok()) return ApiResponse::Error(decoded.status());
                 reports = std::move(decoded).value();
                 auto added = ctx.store.AddMetrics(reports);
                 if (!added.ok()) return ApiResponse::Error(added.status());
                 stored = *added;
                 return ApiResponse{};
               });
               if (written.status != 200) co_return written;
               ApiResponse recorded = co_await OnLifecycle(ctx, [&](Lifecycle& l) {
                 LiveAllocation* alloc = l.allocations().Find(req.params[0]);
                 if (alloc && !alloc->reported_metrics && !reports.empty()) {
                   alloc->reported_metrics = true;
                   spdlog::info("[allocations] allocation {}: first metrics, at {} batches", req.params[0],
                                reports.front().batches);
                 }
                 Status s = l.progress().Record(holder->trial_id, holder->experiment_id, reports);
                 return s.ok() ? ApiResponse{} : ApiResponse::Error(s);
               });
               if (recorded.status != 200) co_return recorded;
               co_return ApiResponse::Json({{"stored", stored}});
             });
  // Streamed out of the store without a stream slot: these are bounded by
  // the ranks the master itself starts, and a rank must not wait behind
  // users' downloads to start. A task that is not a trial gets its context
  // folder here (bounded by max_model_bytes, sent whole).
  router.AddSync("GET", "/api/v1/allocations/{id}/model_definition", Access::kAllocation,
                 [&ctx](ApiRequest& req) {
                   auto holder = ctx.lifecycle.tokens().Authorize(req.params[0], req.BearerToken());
                   if (!holder.ok()) return ApiResponse::Error(holder.status());
                   ApiResponse r;
                   r.content_type = "application/gzip";
                   if (holder->kind != TaskKind::kTrial) {
                     auto context = ctx.store.GetTaskContext(holder->task_id);
                     if (!context.ok()) return ApiResponse::Error(context.status());
                     r.body = std::move(context).value();
                     return r;
                   }
                   r.stream = MakeModelDefinitionStream(ctx.store, holder->experiment_id, nullptr);
                   return r;
                 });
}

}  // namespace ring
