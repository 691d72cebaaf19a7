#include <algorithm>

#include <utility>  // before Asio

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "common/config_continue.h"
#include "common/experiment_config.h"
#include "common/json_fields.h"
#include "master/api/json_views.h"
#include "master/api/routes.h"
#include "master/lifecycle/lifecycle.h"
#include "master/store/store.h"

namespace ring {
namespace {

namespace net = boost::asio;

net::awaitable<ApiResponse> GetTrial(ApiContext& ctx, ApiRequest& req) {
  auto id = ParseId(req.params[0], "trial id");
  if (!id.ok()) co_return ApiResponse::Error(id.status());
  if (Status s = CheckTrialReads(ctx, req, *id, "trials"); !s.ok()) co_return ApiResponse::Error(s);
  auto trial = ctx.store.GetTrial(*id);
  if (!trial.ok()) co_return ApiResponse::Error(trial.status());
  auto view = TrialJson(*trial);
  // As the lifecycle published it; one hop to its thread (which loads the
  // searcher) only when it has not.
  std::optional<int64_t> op;
  if (auto published = ctx.lifecycle.searches().operations_view().Of(trial->experiment_id, trial->id)) {
    op = *published;
  } else {
    co_await OnLifecycle(ctx, [&](Lifecycle& l) {
      op = l.searches().TrialOperation(trial->experiment_id, trial->id);
      return ApiResponse{};
    });
  }
  view["searcher_operation"] = op ? nlohmann::json{{"length", *op}} : nlohmann::json();
  // Why its last allocation ended: what a user reads first when a trial failed.
  view["last_exit_reason"] = nullptr;
  if (auto allocs = ctx.store.ListAllocations(*id); allocs.ok())
    for (auto it = allocs->rbegin(); it != allocs->rend(); ++it)
      if (!it->exit_reason.empty()) {
        view["last_exit_reason"] = it->exit_reason;
        break;
      }
  // Where it was continued: experiments that start from its checkpoints.
  view["continued_in"] = nlohmann::json::array();
  if (auto continued = ctx.store.ListWarmStartedFrom(*id); continued.ok())
    for (int64_t e : *continued) view["continued_in"].push_back({{"experiment_id", e}});
  view["log_policy_matches"] = nlohmann::json::array();
  if (auto matches = ctx.store.ListLogPolicyMatches(*id); matches.ok())
    for (const auto& m : *matches) view["log_policy_matches"].push_back(LogPolicyMatchJson(m));
  co_return ApiResponse::Json(view);
}

ApiResponse ListAllocations(ApiContext& ctx, ApiRequest& req) {
  auto id = ParseId(req.params[0], "trial id");
  if (!id.ok()) return ApiResponse::Error(id.status());
  if (Status s = CheckTrialReads(ctx, req, *id, "trials"); !s.ok()) return ApiResponse::Error(s);
  auto allocs = ctx.store.ListAllocations(*id);
  if (!allocs.ok()) return ApiResponse::Error(allocs.status());
  nlohmann::json list = nlohmann::json::array();
  for (const auto& a : *allocs) list.push_back(AllocationJson(a));
  return ApiResponse::Json({{"allocations", list}, {"total", allocs->size()}});
}

// Lines after `offset`, at most `limit` of them and ctx.max_log_page_bytes of
// text (at least one line), with `more` when the page stopped at either
// limit; with follow=true waits up to 20 s for the first new line, polling
// the store, so `ring trial logs -f` needs no busy loop.
net::awaitable<ApiResponse> GetLogs(ApiContext& ctx, ApiRequest& req) {
  auto id = ParseId(req.params[0], "trial id");
  if (!id.ok()) co_return ApiResponse::Error(id.status());
  auto rank = QueryInt(req, "rank", -1, -1, 1 << 20);
  auto offset = QueryInt(req, "offset", 0, 0, INT64_MAX);
  auto limit = QueryInt(req, "limit", 5000, 1, 50000);
  for (const auto* r : {&rank, &offset, &limit})
    if (!r->ok()) co_return ApiResponse::Error(r->status());
  if (Status s = CheckTrialReads(ctx, req, *id, "logs"); !s.ok()) co_return ApiResponse::Error(s);
  std::string follow = req.query.count("follow") ? req.query.at("follow") : "false";
  if (follow != "true" && follow != "false" && follow != "1" && follow != "0")
    co_return ApiResponse::Error(InvalidArgument("query parameter follow must be true or false"));
  const bool wait = follow == "true" || follow == "1";

  net::steady_timer timer(co_await net::this_coro::executor);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  // Read from the store in chunks, so a page of long lines never holds more
  // than about one chunk beyond max_log_page_bytes.
  constexpr int64_t kChunk = 256;
  for (;;) {
    auto trial = ctx.store.GetTrial(*id);
    if (!trial.ok()) co_return ApiResponse::Error(trial.status());
    nlohmann::json list = nlohmann::json::array();
    int64_t last = *offset;
    size_t bytes = 0;
    bool more = false;
    for (bool full = false; !full;) {
      const int64_t want = std::min<int64_t>(kChunk, *limit - static_cast<int64_t>(list.size()));
      auto logs = ctx.store.GetLogs(*id, static_cast<int>(*rank), last, static_cast<int>(want));
      if (!logs.ok()) co_return ApiResponse::Error(logs.status());
      for (const auto& l : *logs) {
        if (!list.empty() && bytes + l.line.size() > ctx.max_log_page_bytes) {
          more = full = true;
          break;
        }
        bytes += l.line.size();
        list.push_back(LogJson(l));
        last = l.id;
      }
      if (static_cast<int64_t>(list.size()) >= *limit) more = full = true;
      if (static_cast<int64_t>(logs->size()) < want) full = true;  // no more lines now
    }
    if (!list.empty() || !wait || IsTerminal(trial->state) || std::chrono::steady_clock::now() >= give_up) {
      co_return ApiResponse::Json(
          {{"logs", list}, {"offset", last}, {"more", more}, {"trial_state", ToString(trial->state)}});
    }
    timer.expires_after(std::chrono::milliseconds(200));
    co_await timer.async_wait(net::use_awaitable);
  }
}

// POST /trials/{id}/kill: the trial's experiment's owner or an admin.
net::awaitable<ApiResponse> KillTrial(ApiContext& ctx, ApiRequest& req) {
  auto id = ParseId(req.params[0], "trial id");
  if (!id.ok()) co_return ApiResponse::Error(id.status());
  auto trial = ctx.store.GetTrial(*id);
  if (!trial.ok()) co_return ApiResponse::Error(trial.status());
  if (Status s = CheckManages(ctx, req, trial->experiment_id, "kill a trial of"); !s.ok())
    co_return ApiResponse::Error(s);
  ApiResponse done = co_await OnLifecycle(ctx, [&](Lifecycle& l) {
    Status s = l.outcomes().Kill(*id);
    return s.ok() ? ApiResponse{} : ApiResponse::Error(s);
  });
  if (done.status != 200) co_return done;
  co_return co_await GetTrial(ctx, req);  // the trial as GET shows it
}

// POST /trials/{id}/continue {"length": N, "activate": bool, "in_place":
// bool}: a new single-trial experiment that trains the trial further from
// its latest checkpoint (common/config_continue.h), with its experiment's
// model definition, which whoever may download that experiment's
// checkpoints may do; or, in place, the trial's own ended single-trial
// experiment trains it on (its owner or an admin).
net::awaitable<ApiResponse> ContinueTrial(ApiContext& ctx, ApiRequest& req) {
  auto id = ParseId(req.params[0], "trial id");
  if (!id.ok()) co_return ApiResponse::Error(id.status());
  auto body = ParseJsonBody(req);
  if (!body.ok()) co_return ApiResponse::Error(body.status());
  if (Status s = CheckKnownFields(*body, {"length", "activate", "in_place"}, "the request body"); !s.ok())
    co_return ApiResponse::Error(s);
  auto length = body->find("length");
  if (length == body->end() || !length->is_number_integer() || length->get<int64_t>() < 1)
    co_return ApiResponse::Error(InvalidArgument(
        "length is required: the new total length, a positive integer in the searcher's units"));
  for (const char* flag : {"activate", "in_place"})
    if (body->contains(flag) && !(*body)[flag].is_boolean())
      co_return ApiResponse::Error(InvalidArgument(std::string(flag) + " must be true or false"));
  const bool in_place = body->value("in_place", false);
  auto trial = ctx.store.GetTrial(*id);
  if (!trial.ok()) co_return ApiResponse::Error(trial.status());
  if (Status s = in_place ? CheckManages(ctx, req, trial->experiment_id, "continue a trial in place in")
                          : CheckDownloads(ctx, req, trial->experiment_id,
                                           "checkpoints and model definition (to continue its trials)");
      !s.ok())
    co_return ApiResponse::Error(s);
  if (trial->latest_checkpoint.empty())
    co_return ApiResponse::Error(
        Conflict("trial " + std::to_string(*id) + " has no checkpoint to continue from: it never saved one"));
  auto latest = ctx.store.GetCheckpoint(trial->latest_checkpoint);
  if (!latest.ok()) co_return ApiResponse::Error(latest.status());
  if (latest->state != CheckpointState::kActive)
    co_return ApiResponse::Error(Conflict("trial " + std::to_string(*id) + "'s latest checkpoint " +
                                          latest->uuid + " was deleted: it cannot be continued"));
  auto parent = ctx.store.GetExperiment(trial->experiment_id);
  if (!parent.ok()) co_return ApiResponse::Error(parent.status());
  if (parent->deleting)
    co_return ApiResponse::Error(NotFound("experiment " + std::to_string(parent->id) + " is being deleted"));
  auto config = in_place ? WithSearcherLength(parent->config_yaml, parent->id, length->get<int64_t>())
                         : ContinueConfig(parent->config_yaml,
                                          {trial->experiment_id, *id, trial->hparams_json, trial->seed},
                                          length->get<int64_t>());
  if (!config.ok()) co_return ApiResponse::Error(config.status());
  // Under the operations contract in batches, a length the checkpoint has
  // already reached would end at once.
  if (auto parsed = ParseExperimentConfig(*config); parsed.ok()) {
    const int64_t batches = parsed->searcher.max_length_batches;
    if (batches > 0 && batches <= latest->batches)
      co_return ApiResponse::Error(InvalidArgument(
          "length " + std::to_string(length->get<int64_t>()) + " is not beyond trial " + std::to_string(*id) +
          "'s latest checkpoint, at " + std::to_string(latest->batches) + " batches"));
  }
  if (in_place)
    co_return co_await OnLifecycle(ctx, [&](Lifecycle& l) {
      Status s = l.experiments().ContinueTrial(*id, *config);
      if (!s.ok()) return ApiResponse::Error(s);
      return ApiResponse::Json(
          {{"id", parent->id}, {"in_place", true}, {"warnings", nlohmann::json::array()}});
    });
  auto model = ctx.store.GetModelDefinition(trial->experiment_id);
  if (!model.ok()) co_return ApiResponse::Error(model.status());
  co_return co_await SubmitExperiment(ctx, req, *config, *model, body->value("activate", true), std::nullopt,
                                      parent->project_id);
}

}  // namespace

void RegisterTrialRoutes(Router& router, ApiContext& ctx) {
  router.Add("POST", "/api/v1/trials/{id}/kill", Access::kUser,
             [&ctx](ApiRequest& r) { return KillTrial(ctx, r); });
  router.Add("POST", "/api/v1/trials/{id}/continue", Access::kUser,
             [&ctx](ApiRequest& r) { return ContinueTrial(ctx, r); });
  router.Add("GET", "/api/v1/trials/{id}", Access::kUser, [&ctx](ApiRequest& r) { return GetTrial(ctx, r); });
  // GET /api/v1/trials/{id}/metrics: metrics_api.cc.
  router.AddSync("GET", "/api/v1/trials/{id}/allocations", Access::kUser,
                 [&ctx](ApiRequest& r) { return ListAllocations(ctx, r); });
  router.Add("GET", "/api/v1/trials/{id}/logs", Access::kUser,
             [&ctx](ApiRequest& r) { return GetLogs(ctx, r); });
}

}  // namespace ring
