// Checkpoints: the trial API that registers and verifies them, and the user
// API that lists and downloads them.
#include <utility>  // before Asio

#include <spdlog/spdlog.h>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "master/api/commands.h"
#include "master/api/json_views.h"
#include "master/api/routes.h"
#include "master/files/checkpoint_archive.h"
#include "master/files/checkpoint_folder.h"
#include "master/lifecycle/lifecycle.h"
#include "master/lifecycle/warm_start.h"

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
  auto metrics = ctx.store.GetMetrics(c.trial_id, MetricKind::kValidation);
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
  if (Status s = CheckTrialReads(ctx, req, *id, "checkpoints"); !s.ok()) return ApiResponse::Error(s);
  nlohmann::json list = nlohmann::json::array();
  if (auto r = ListForTrial(ctx, *id, list); r.status != 200) return r;
  const auto total = list.size();
  return ApiResponse::Json({{"checkpoints", std::move(list)}, {"total", total}});
}

ApiResponse ExperimentCheckpoints(ApiContext& ctx, ApiRequest& req) {
  auto id = ParseId(req.params[0], "experiment id");
  if (!id.ok()) return ApiResponse::Error(id.status());
  if (Status s = CheckReads(ctx, req, *id, "checkpoints"); !s.ok()) return ApiResponse::Error(s);
  auto trials = ctx.store.ListTrials(*id);
  if (!trials.ok()) return ApiResponse::Error(trials.status());
  nlohmann::json list = nlohmann::json::array();
  for (const auto& t : *trials)
    if (auto r = ListForTrial(ctx, t.id, list); r.status != 200) return r;
  const auto total = list.size();
  return ApiResponse::Json({{"checkpoints", std::move(list)}, {"total", total}});
}

// One checkpoint, with the model versions it is (lists leave them out).
ApiResponse GetCheckpoint(ApiContext& ctx, ApiRequest& req) {
  auto c = ctx.store.GetCheckpoint(req.params[0]);
  if (!c.ok()) return ApiResponse::Error(c.status());
  if (Status s = CheckTrialReads(ctx, req, c->trial_id, "checkpoints"); !s.ok()) return ApiResponse::Error(s);
  nlohmann::json j = CheckpointView(ctx, *c);
  auto versions = ctx.store.ListCheckpointModelVersions(c->uuid);
  if (!versions.ok()) return ApiResponse::Error(versions.status());
  j["model_versions"] = nlohmann::json::array();
  for (const auto& v : *versions) j["model_versions"].push_back({{"model", v.model}, {"version", v.version}});
  return ApiResponse::Json(j);
}

// Streams exactly the registered files, each opened without following links
// and hashed first (off the network threads), then again as it is sent.
net::awaitable<ApiResponse> Download(ApiContext& ctx, ApiRequest& req) {
  auto c = ctx.store.GetCheckpoint(req.params[0]);
  if (!c.ok()) co_return ApiResponse::Error(c.status());
  auto trial = ctx.store.GetTrial(c->trial_id);
  if (!trial.ok()) co_return ApiResponse::Error(trial.status());
  if (Status s = CheckDownloads(ctx, req, trial->experiment_id, "checkpoints"); !s.ok())
    co_return ApiResponse::Error(s);
  if (c->state != CheckpointState::kActive)
    co_return ApiResponse::Error(Conflict("checkpoint " + c->uuid + " was garbage collected"));
  auto slot = TakeStreamSlot(ctx);
  if (!slot.ok()) co_return ApiResponse::Error(slot.status());
  const CheckpointRoots& roots = ctx.lifecycle.settings().roots();  // const after start
  co_return co_await OffNetworkThread(ctx.file_work, [&]() -> ApiResponse {
    auto refused = [&](const Status& s) {
      spdlog::warn("[checkpoints] checkpoint {}: download refused: {}", c->uuid, s.message());
      return ApiResponse::Error(Conflict("checkpoint " + c->uuid + " cannot be downloaded: " + s.message()));
    };
    auto folder = OpenCheckpointFolder(roots, c->storage, c->uuid);
    if (!folder.ok()) return refused(folder.status());
    if (Status s = VerifyRegisteredFiles(folder->get(), c->resources); !s.ok()) return refused(s);
    ApiResponse r;
    r.content_type = "application/gzip";
    r.stream = MakeCheckpointArchiveStream(*c, std::move(folder).value(), *slot);
    r.headers.emplace_back("Content-Disposition", "attachment; filename=\"" + c->uuid + ".tar.gz\"");
    return r;
  });
}

// Long poll: answers as soon as the allocation is asked to stop, or after timeout_s.
net::awaitable<ApiResponse> PreemptionPoll(ApiContext& ctx, ApiRequest& req) {
  auto timeout = QueryInt(req, "timeout_s", 30, 0, 60);
  if (!timeout.ok()) co_return ApiResponse::Error(timeout.status());
  net::steady_timer timer(co_await net::this_coro::executor);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(*timeout);
  for (;;) {
    bool preempt = false;
    ApiResponse answer = co_await OnLifecycle(ctx, [&](Lifecycle& l) {
      auto alloc = l.allocations().Live(req.params[0]);
      if (!alloc.ok()) return ApiResponse::Error(alloc.status());
      preempt = (*alloc)->preemption.requested();
      return ApiResponse::Json({{"preempt", preempt}});
    });
    if (answer.status != 200 || preempt || std::chrono::steady_clock::now() >= give_up) co_return answer;
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
  router.Add("GET", "/api/v1/checkpoints/{uuid}/download", Access::kUser,
             [&ctx](ApiRequest& r) { return Download(ctx, r); });
  // A new checkpoint's uuid and folder, issued before the trial writes it.
  router.Add("POST", "/api/v1/allocations/{id}/checkpoints/prepare", Access::kAllocation,
             [&ctx](ApiRequest& req) -> net::awaitable<ApiResponse> {
               co_return co_await OnLifecycle(ctx, [&](Lifecycle& l) {
                 auto alloc = l.allocations().Live(req.params[0]);
                 if (!alloc.ok()) return ApiResponse::Error(alloc.status());
                 auto issued =
                     l.checkpoints().Prepare((*alloc)->experiment_id, (*alloc)->trial_id(), req.params[0]);
                 if (!issued.ok()) return ApiResponse::Error(issued.status());
                 CheckpointRecord where;
                 where.uuid = issued->uuid;
                 where.storage = issued->storage;
                 return ApiResponse::Json({{"uuid", issued->uuid},
                                           {"storage",
                                            {{"type", issued->storage.type},
                                             {"host_path", issued->storage.host_path},
                                             {"storage_path", issued->storage.storage_path}}},
                                           {"path", Checkpoints::Dir(where)}},
                                          201);
               });
             });

  router.Add("POST", "/api/v1/allocations/{id}/checkpoints", Access::kAllocation,
             [&ctx](ApiRequest& req) -> net::awaitable<ApiResponse> {
               auto body = ParseJsonBody(req);
               if (!body.ok()) co_return ApiResponse::Error(body.status());
               auto checkpoint = DecodeCheckpoint(*body);
               if (!checkpoint.ok()) co_return ApiResponse::Error(checkpoint.status());
               co_return co_await OnLifecycle(ctx, [&](Lifecycle& l) {
                 auto alloc = l.allocations().Live(req.params[0]);
                 if (!alloc.ok()) return ApiResponse::Error(alloc.status());
                 checkpoint->trial_id = (*alloc)->trial_id();
                 checkpoint->allocation_id = req.params[0];
                 auto created = l.checkpoints().Register((*alloc)->experiment_id, *checkpoint);
                 if (!created.ok()) return ApiResponse::Error(created.status());
                 return ApiResponse::Json({{"uuid", checkpoint->uuid}}, *created ? 201 : 200);
               });
             });
  // Reads only: the token was checked on the way in, so this needs no hop.
  router.AddSync("GET", "/api/v1/allocations/{id}/checkpoints/{uuid}", Access::kAllocation,
                 [&ctx](ApiRequest& req) {
                   auto holder = ctx.lifecycle.tokens().AuthorizeTrial(req.params[0], req.BearerToken());
                   if (!holder.ok()) return ApiResponse::Error(holder.status());
                   auto c = RestorableCheckpoint(ctx.store, holder->trial_id, req.params[1]);
                   if (!c.ok()) return ApiResponse::Error(c.status());
                   return ApiResponse::Json(CheckpointView(ctx, *c));
                 });
  router.Add("GET", "/api/v1/allocations/{id}/preemption", Access::kAllocation,
             [&ctx](ApiRequest& r) { return PreemptionPoll(ctx, r); });
  router.Add("POST", "/api/v1/allocations/{id}/preemption/ack", Access::kAllocation, [&ctx](ApiRequest& req) {
    return OnLifecycle(ctx, [&req](Lifecycle& l) {
      auto alloc = l.allocations().Live(req.params[0]);
      if (!alloc.ok()) return ApiResponse::Error(alloc.status());
      if (!(*alloc)->preemption.requested())
        return ApiResponse::Error(Conflict("allocation " + req.params[0] + " was not asked to stop"));
      (*alloc)->preemption.Acknowledge();
      spdlog::info("[allocations] allocation {} acknowledged preemption", req.params[0]);
      return ApiResponse::Json({{"acknowledged", true}});
    });
  });
}

}  // namespace ring
