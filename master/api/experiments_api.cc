#include <memory>

#include "common/archive.h"
#include "master/api/experiment_query.h"
#include "master/api/json_views.h"
#include "master/api/response_cache.h"
#include "master/api/routes.h"
#include "master/core/experiment_controller.h"
#include "master/core/json_fields.h"

namespace ring {
namespace {

ApiResponse CreateExperiment(ApiContext& ctx, ApiRequest& req) {
  auto body = ParseJsonBody(req);
  if (!body.ok()) return ApiResponse::Error(body.status());
  const auto& j = *body;
  if (Status s = CheckKnownFields(j, {"config", "model_definition", "activate"}, "the request body"); !s.ok())
    return ApiResponse::Error(s);
  if (!j.contains("config") || !j["config"].is_string())
    return ApiResponse::Error(
        InvalidArgument("config is required and must be the YAML text of the experiment"));
  if (!j.contains("model_definition") || !j["model_definition"].is_string())
    return ApiResponse::Error(InvalidArgument("model_definition is required and must be a base64 tar.gz"));
  if (j.contains("activate") && !j["activate"].is_boolean())
    return ApiResponse::Error(InvalidArgument("activate must be true or false"));
  auto model = Base64Decode(j["model_definition"].get<std::string>());
  if (!model.ok())
    return ApiResponse::Error(InvalidArgument("model_definition: " + model.status().message()));
  auto id = ctx.controller.CreateExperiment(j["config"].get<std::string>(), *model, j.value("activate", true),
                                            req.principal ? req.principal->username : "default");
  if (!id.ok()) return ApiResponse::Error(id.status());
  return ApiResponse::Json({{"id", *id}}, 201);
}

Result<nlohmann::json> ExperimentView(ApiContext& ctx, int64_t id) {
  auto exp = ctx.store.GetExperiment(id);
  if (!exp.ok()) return exp.status();
  auto trials = ctx.store.ListTrials(id);
  if (!trials.ok()) return trials.status();
  auto view = ExperimentJson(*exp, static_cast<int64_t>(trials->size()));
  AddConfigSummary(view, SummarizeConfig(exp->config_yaml));
  const EffectiveResources r = ctx.controller.Resources(id);
  view["resources"] = {{"resource_pool", r.pool},
                       {"slots_per_trial", r.slots_per_trial},
                       {"priority", r.priority},
                       {"weight", r.weight},
                       {"max_slots", r.max_slots ? nlohmann::json(*r.max_slots) : nlohmann::json()}};
  return view;
}

// Filters, sorts and pages over every experiment (experiment_query.h): the
// store pages by id only, and a master holds thousands, not millions.
ApiResponse BuildExperimentList(ApiContext& ctx, ApiRequest& req) {
  auto q = ParseExperimentQuery(req.query);
  if (!q.ok()) return ApiResponse::Error(q.status());
  std::vector<ExperimentRow> all;
  for (int64_t offset = 0;;) {
    auto page = ctx.store.ListExperiments(1000, offset);
    if (!page.ok()) return ApiResponse::Error(page.status());
    for (auto& e : page->items) all.push_back({std::move(e), -1});
    offset += static_cast<int64_t>(page->items.size());
    if (page->items.empty() || offset >= page->total) break;
  }
  auto count_trials = [&ctx](int64_t id) -> int64_t {
    auto trials = ctx.store.ListTrials(id);
    return trials.ok() ? static_cast<int64_t>(trials->size()) : 0;
  };
  nlohmann::json facets = ExperimentFacets(all);
  auto rows = SelectExperiments(std::move(all), *q, count_trials);
  nlohmann::json list = nlohmann::json::array();
  const auto total = static_cast<int64_t>(rows.size());
  for (int64_t i = q->offset; i < total && i - q->offset < q->limit; ++i) {
    auto& row = rows[static_cast<size_t>(i)];
    auto view =
        ExperimentJson(row.record, row.num_trials >= 0 ? row.num_trials : count_trials(row.record.id));
    AddConfigSummary(view, SummarizeConfig(row.record.config_yaml));
    list.push_back(std::move(view));
  }
  return ApiResponse::Json({{"experiments", list}, {"total", total}, {"facets", facets}});
}

// The list from the cache while no experiment or trial changes.
ApiResponse ListExperiments(ApiContext& ctx, ApiRequest& req, ResponseCache& cache) {
  return cache.Answer([&ctx] { return ctx.store.ExperimentsGeneration(); }, QueryKey(req),
                      [&] { return BuildExperimentList(ctx, req); });
}

ApiResponse GetExperiment(ApiContext& ctx, ApiRequest& req) {
  auto id = ParseId(req.params[0], "experiment id");
  if (!id.ok()) return ApiResponse::Error(id.status());
  auto view = ExperimentView(ctx, *id);
  if (!view.ok()) return ApiResponse::Error(view.status());
  return ApiResponse::Json(*view);
}

ApiResponse ListTrials(ApiContext& ctx, ApiRequest& req) {
  auto id = ParseId(req.params[0], "experiment id");
  if (!id.ok()) return ApiResponse::Error(id.status());
  if (auto exp = ctx.store.GetExperiment(*id); !exp.ok()) return ApiResponse::Error(exp.status());
  auto trials = ctx.store.ListTrials(*id);
  if (!trials.ok()) return ApiResponse::Error(trials.status());
  nlohmann::json list = nlohmann::json::array();
  for (const auto& t : *trials) {
    auto view = TrialJson(t);
    auto op = ctx.controller.TrialOperation(t.experiment_id, t.id);
    view["searcher_operation"] = op ? nlohmann::json{{"length", *op}} : nlohmann::json();
    list.push_back(std::move(view));
  }
  return ApiResponse::Json({{"trials", list}, {"total", trials->size()}});
}

ApiResponse Action(ApiContext& ctx, ApiRequest& req) {
  auto id = ParseId(req.params[0], "experiment id");
  if (!id.ok()) return ApiResponse::Error(id.status());
  const std::string& action = req.params[1];
  if (Status s = CheckManages(ctx, req, *id, action); !s.ok()) return ApiResponse::Error(s);
  Status s;
  if (action == "kill")
    s = ctx.controller.Kill(*id);
  else if (action == "pause")
    s = ctx.controller.Pause(*id);
  else if (action == "activate")
    s = ctx.controller.Activate(*id);
  else if (action == "archive" || action == "unarchive")
    s = ctx.controller.SetArchived(*id, action == "archive");
  else
    return ApiResponse::Error(NotFound("unknown experiment action \"" + action +
                                       "\"; use pause, activate, kill, archive or unarchive"));
  if (!s.ok()) return ApiResponse::Error(s);
  auto view = ExperimentView(ctx, *id);
  if (!view.ok()) return ApiResponse::Error(view.status());
  return ApiResponse::Json(*view);
}

// PATCH {"priority", "weight", "max_slots"}: the experiment's scheduling, live.
ApiResponse Patch(ApiContext& ctx, ApiRequest& req) {
  auto id = ParseId(req.params[0], "experiment id");
  if (!id.ok()) return ApiResponse::Error(id.status());
  if (Status s = CheckManages(ctx, req, *id, "change"); !s.ok()) return ApiResponse::Error(s);
  auto body = ParseJsonBody(req);
  if (!body.ok()) return ApiResponse::Error(body.status());
  if (Status s = ctx.controller.SetResources(*id, *body); !s.ok()) return ApiResponse::Error(s);
  auto view = ExperimentView(ctx, *id);
  if (!view.ok()) return ApiResponse::Error(view.status());
  return ApiResponse::Json(*view);
}

}  // namespace

void RegisterExperimentRoutes(Router& router, ApiContext& ctx) {
  router.AddSync("POST", "/api/v1/experiments", Access::kUser,
                 [&ctx](ApiRequest& r) { return CreateExperiment(ctx, r); });
  auto list_cache = std::make_shared<ResponseCache>();
  router.AddSync("GET", "/api/v1/experiments", Access::kUser,
                 [&ctx, list_cache](ApiRequest& r) { return ListExperiments(ctx, r, *list_cache); });
  router.AddSync("GET", "/api/v1/experiments/{id}", Access::kUser,
                 [&ctx](ApiRequest& r) { return GetExperiment(ctx, r); });
  router.AddSync("GET", "/api/v1/experiments/{id}/trials", Access::kUser,
                 [&ctx](ApiRequest& r) { return ListTrials(ctx, r); });
  router.AddSync("PATCH", "/api/v1/experiments/{id}", Access::kUser,
                 [&ctx](ApiRequest& r) { return Patch(ctx, r); });
  router.AddSync("POST", "/api/v1/experiments/{id}/{action}", Access::kUser,
                 [&ctx](ApiRequest& r) { return Action(ctx, r); });
}

}  // namespace ring
