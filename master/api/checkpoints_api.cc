// Checkpoints: the trial API that registers and verifies them, and the user
// API that lists and downloads them.
#include <utility>  // before Asio

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "common/archive.h"
#include "master/api/json_views.h"
#include "master/api/routes.h"
#include "master/core/experiment_controller.h"

namespace ring {
namespace {

namespace net = boost::asio;

// The record plus what a reader wants next to it: its experiment and the
// validation metric reported at (or before) its batches.
nlohmann::json CheckpointView(ApiContext& ctx, const CheckpointRecord& c) {
  nlohmann::json j = CheckpointJson(c);
  j["experiment_id"] = nullptr;
  j["validation_metric"] = nullptr;
  auto trial = ctx.store.GetTrial(c.trial_id);
  if (!trial.ok()) return j;
  j["experiment_id"] = trial->experiment_id;
  auto exp = ctx.store.GetExperiment(trial->experiment_id);
  auto metrics = ctx.store.GetMetrics(c.trial_id, "validation");
  if (!exp.ok() || !metrics.ok()) return j;
  auto config = ParseExperimentConfig(exp->config_yaml);
  if (!config.ok()) return j;
  for (const auto& m : *metrics) {
    if (m.batches > c.batches) break;
    auto v = nlohmann::json::parse(m.metrics_json, nullptr, false);
    if (v.is_object() && v.contains(config->searcher.metric))
      j["validation_metric"] = v[config->searcher.metric];
  }
  return j;
}

ApiResponse ListForTrial(ApiContext& ctx, int64_t trial_id, nlohmann::json& list) {
  auto checkpoints = ctx.store.ListCheckpoints(trial_id);
  if (!checkpoints.ok()) return ApiResponse::Error(checkpoints.status());
  for (const auto& c : *checkpoints) list.push_back(CheckpointView(ctx, c));
  return {};
}

ApiResponse TrialCheckpoints(ApiContext& ctx, ApiRequest& req) {
  auto id = ParseId(req.params[0], "trial id");
  if (!id.ok()) return ApiResponse::Error(id.status());
  if (auto t = ctx.store.GetTrial(*id); !t.ok()) return ApiResponse::Error(t.status());
  nlohmann::json list = nlohmann::json::array();
  if (auto r = ListForTrial(ctx, *id, list); r.status != 200) return r;
  const auto total = list.size();
  return ApiResponse::Json({{"checkpoints", std::move(list)}, {"total", total}});
}

ApiResponse ExperimentCheckpoints(ApiContext& ctx, ApiRequest& req) {
  auto id = ParseId(req.params[0], "experiment id");
  if (!id.ok()) return ApiResponse::Error(id.status());
  if (auto e = ctx.store.GetExperiment(*id); !e.ok()) return ApiResponse::Error(e.status());
  auto trials = ctx.store.ListTrials(*id);
  if (!trials.ok()) return ApiResponse::Error(trials.status());
  nlohmann::json list = nlohmann::json::array();
  for (const auto& t : *trials)
    if (auto r = ListForTrial(ctx, t.id, list); r.status != 200) return r;
  const auto total = list.size();
  return ApiResponse::Json({{"checkpoints", std::move(list)}, {"total", total}});
}

ApiResponse GetCheckpoint(ApiContext& ctx, ApiRequest& req) {
  auto c = ctx.store.GetCheckpoint(req.params[0]);
  if (!c.ok()) return ApiResponse::Error(c.status());
  return ApiResponse::Json(CheckpointView(ctx, *c));
}

ApiResponse Download(ApiContext& ctx, ApiRequest& req) {
  auto c = ctx.store.GetCheckpoint(req.params[0]);
  if (!c.ok()) return ApiResponse::Error(c.status());
  if (c->state != "ACTIVE")
    return ApiResponse::Error(Conflict("checkpoint " + c->uuid + " was garbage collected"));
  PackOptions options;
  options.max_bytes = 16ull << 30;
  auto tar = PackDirectory(ExperimentController::CheckpointDir(*c), options);
  if (!tar.ok())
    return ApiResponse::Error(Unavailable("checkpoint files cannot be read: " + tar.status().message()));
  ApiResponse r;
  r.content_type = "application/gzip";
  r.body = std::move(tar).value();
  r.headers.emplace_back("Content-Disposition", "attachment; filename=\"" + c->uuid + ".tar.gz\"");
  return r;
}

// Long poll: answers as soon as the allocation is asked to stop, or after timeout_s.
net::awaitable<ApiResponse> Preemption(ApiContext& ctx, ApiRequest& req) {
  auto timeout = QueryInt(req, "timeout_s", 30, 0, 60);
  if (!timeout.ok()) co_return ApiResponse::Error(timeout.status());
  net::steady_timer timer(co_await net::this_coro::executor);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(*timeout);
  for (;;) {
    auto preempt = ctx.controller.PreemptionRequested(req.params[0], req.BearerToken());
    if (!preempt.ok()) co_return ApiResponse::Error(preempt.status());
    if (*preempt || std::chrono::steady_clock::now() >= give_up)
      co_return ApiResponse::Json({{"preempt", *preempt}});
    timer.expires_after(std::chrono::milliseconds(200));
    co_await timer.async_wait(net::use_awaitable);
  }
}

}  // namespace

void RegisterCheckpointRoutes(Router& router, ApiContext& ctx) {
  UseAllocationTokens(router, ctx);
  router.AddSync("GET", "/api/v1/trials/{id}/checkpoints", Access::kUser,
                 [&ctx](ApiRequest& r) { return TrialCheckpoints(ctx, r); });
  router.AddSync("GET", "/api/v1/experiments/{id}/checkpoints", Access::kUser,
                 [&ctx](ApiRequest& r) { return ExperimentCheckpoints(ctx, r); });
  router.AddSync("GET", "/api/v1/checkpoints/{uuid}", Access::kUser,
                 [&ctx](ApiRequest& r) { return GetCheckpoint(ctx, r); });
  router.AddSync("GET", "/api/v1/checkpoints/{uuid}/download", Access::kUser,
                 [&ctx](ApiRequest& r) { return Download(ctx, r); });

  router.AddSync("POST", "/api/v1/allocations/{id}/checkpoints", Access::kAllocation,
                 [&ctx](ApiRequest& req) {
                   auto body = ParseJsonBody(req);
                   if (!body.ok()) return ApiResponse::Error(body.status());
                   auto created = ctx.controller.RegisterCheckpoint(req.params[0], req.BearerToken(), *body);
                   if (!created.ok()) return ApiResponse::Error(created.status());
                   return ApiResponse::Json({{"uuid", (*body)["uuid"]}}, *created ? 201 : 200);
                 });
  router.AddSync("GET", "/api/v1/allocations/{id}/checkpoints/{uuid}", Access::kAllocation,
                 [&ctx](ApiRequest& req) {
                   auto c = ctx.controller.TrialCheckpoint(req.params[0], req.BearerToken(), req.params[1]);
                   if (!c.ok()) return ApiResponse::Error(c.status());
                   return ApiResponse::Json(CheckpointView(ctx, *c));
                 });
  router.Add("GET", "/api/v1/allocations/{id}/preemption", Access::kAllocation,
             [&ctx](ApiRequest& r) { return Preemption(ctx, r); });
  router.AddSync("POST", "/api/v1/allocations/{id}/preemption/ack", Access::kAllocation,
                 [&ctx](ApiRequest& req) {
                   Status s = ctx.controller.AcknowledgePreemption(req.params[0], req.BearerToken());
                   if (!s.ok()) return ApiResponse::Error(s);
                   return ApiResponse::Json({{"acknowledged", true}});
                 });
}

}  // namespace ring
