#include <algorithm>
#include <map>
#include <memory>

#include <utility>  // before Asio

#include <spdlog/spdlog.h>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>

#include "common/archive.h"
#include "common/experiment_config.h"
#include "common/json_fields.h"
#include "master/api/commands.h"
#include "master/api/experiment_placement.h"
#include "master/api/experiment_query.h"
#include "master/api/json_views.h"
#include "master/api/response_cache.h"
#include "master/api/routes.h"
#include "master/api/workspace_views.h"
#include "master/lifecycle/lifecycle.h"
#include "master/lifecycle/read_access.h"
#include "master/maintenance/experiment_deletion.h"
#include "master/rm/routing_rm.h"
#include "master/store/model_definition_stream.h"

namespace ring {

namespace {

Result<nlohmann::json> ExperimentView(ApiContext& ctx, int64_t id) {
  auto exp = ctx.store.GetExperiment(id);
  if (!exp.ok()) return exp.status();
  if (exp->deleting) return NotFound("experiment " + std::to_string(id) + " is being deleted");
  auto trials = ctx.store.ListTrials(id);
  if (!trials.ok()) return trials.status();
  auto view = ExperimentJson(*exp, static_cast<int64_t>(trials->size()));
  auto names = PlacementNames::Load(ctx.store);
  if (!names.ok()) return names.status();
  names->AddTo(view, exp->project_id);
  // The config's summary is memoized by its text: no YAML parse per GET.
  const ConfigSummary summary = SummarizeExperiment(*exp);
  AddConfigSummary(view, summary);
  auto overrides = ctx.store.GetResourceOverrides(id);
  const EffectiveResources r =
      ExperimentSettings::Effective(summary.resources, overrides.ok() ? *overrides : ResourceOverrides{});
  view["resources"] = {{"resource_pool", r.pool},
                       {"slots_per_trial", r.slots_per_trial},
                       {"priority", r.priority},
                       {"weight", r.weight},
                       {"max_slots", r.max_slots ? nlohmann::json(*r.max_slots) : nlohmann::json()}};
  view["warm_start"] = nullptr;
  if (!exp->warm_start_checkpoint.empty()) {
    auto source = ctx.store.GetCheckpoint(exp->warm_start_checkpoint);
    if (!source.ok()) return source.status();
    auto trial = ctx.store.GetTrial(source->trial_id);
    if (!trial.ok()) return trial.status();
    view["warm_start"] = {{"checkpoint_uuid", source->uuid},
                          {"trial_id", source->trial_id},
                          {"experiment_id", trial->experiment_id},
                          {"batches", source->batches},
                          {"state", ToString(source->state)}};
  }
  return view;
}

// Filters, sorts and pages over every experiment (experiment_query.h): the
// store pages by id only, and a master holds thousands, not millions.
ApiResponse BuildExperimentList(ApiContext& ctx, ApiRequest& req) {
  auto q = ParseExperimentQuery(req.query);
  if (!q.ok()) return ApiResponse::Error(q.status());
  auto names = PlacementNames::Load(ctx.store);
  if (!names.ok()) return ApiResponse::Error(names.status());
  const Reader reader = ReaderOf(ctx, req);
  // Only what the caller may read, in the project and workspace asked for.
  auto keep = [&](const ExperimentRecord& e) {
    if (e.deleting) return false;
    if (q->project_id && e.project_id != *q->project_id) return false;
    if (q->workspace_id && names->WorkspaceOf(e.project_id) != *q->workspace_id) return false;
    auto readable = MayReadExperiment(ctx.store, e, reader);
    return readable.ok() && *readable;
  };
  std::vector<ExperimentRow> all;
  for (int64_t offset = 0;;) {
    auto page = ctx.store.ListExperiments(1000, offset);
    if (!page.ok()) return ApiResponse::Error(page.status());
    for (auto& e : page->items)
      if (keep(e)) all.push_back({std::move(e), -1});
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
    AddConfigSummary(view, SummarizeExperiment(row.record));
    names->AddTo(view, row.record.project_id);
    list.push_back(std::move(view));
  }
  return ApiResponse::Json({{"experiments", list}, {"total", total}, {"facets", facets}});
}

// The list from the cache while no experiment or trial changes.
ApiResponse ListExperiments(ApiContext& ctx, ApiRequest& req, ResponseCache& cache) {
  // What a user reads depends on who they are unless experiments are
  // team-readable; workspaces and projects change without an experiment.
  std::string key = QueryKey(req);
  if (!ctx.experiments_team_readable && req.principal)
    key += "|" + std::string(req.principal->admin() ? "admin" : req.principal->username);
  return cache.Answer([&ctx] { return ctx.store.ExperimentsGeneration(); }, key,
                      [&] { return BuildExperimentList(ctx, req); });
}

ApiResponse GetExperiment(ApiContext& ctx, ApiRequest& req) {
  auto id = ParseId(req.params[0], "experiment id");
  if (!id.ok()) return ApiResponse::Error(id.status());
  if (Status s = CheckReads(ctx, req, *id, "experiment"); !s.ok()) return ApiResponse::Error(s);
  auto view = ExperimentView(ctx, *id);
  if (!view.ok()) return ApiResponse::Error(view.status());
  return ApiResponse::Json(*view);
}

boost::asio::awaitable<ApiResponse> ListTrials(ApiContext& ctx, ApiRequest& req) {
  auto id = ParseId(req.params[0], "experiment id");
  if (!id.ok()) co_return ApiResponse::Error(id.status());
  if (Status s = CheckReads(ctx, req, *id, "trials"); !s.ok()) co_return ApiResponse::Error(s);
  auto trials = ctx.store.ListTrials(*id);
  if (!trials.ok()) co_return ApiResponse::Error(trials.status());
  std::vector<std::optional<int64_t>> ops(trials->size());
  // The searcher's operations as the lifecycle published them; one hop to
  // its thread (which loads the searcher) only when it has not.
  if (!trials->empty()) {
    if (auto published = ctx.lifecycle.searches().operations_view().Of(*id)) {
      for (size_t i = 0; i < trials->size(); ++i)
        if (auto op = published->find((*trials)[i].id); op != published->end()) ops[i] = op->second;
    } else {
      co_await OnLifecycle(ctx, [&](Lifecycle& l) {
        for (size_t i = 0; i < trials->size(); ++i)
          ops[i] = l.searches().TrialOperation((*trials)[i].experiment_id, (*trials)[i].id);
        return ApiResponse{};
      });
    }
  }
  nlohmann::json list = nlohmann::json::array();
  for (size_t i = 0; i < trials->size(); ++i) {
    auto view = TrialJson((*trials)[i]);
    view["searcher_operation"] = ops[i] ? nlohmann::json{{"length", *ops[i]}} : nlohmann::json();
    list.push_back(std::move(view));
  }
  co_return ApiResponse::Json({{"trials", list}, {"total", trials->size()}});
}

enum class ExperimentAction { kKill, kPause, kActivate, kArchive, kUnarchive };

boost::asio::awaitable<ApiResponse> Action(ApiContext& ctx, ApiRequest& req) {
  auto id = ParseId(req.params[0], "experiment id");
  if (!id.ok()) co_return ApiResponse::Error(id.status());
  const std::string& name = req.params[1];
  static const std::map<std::string, ExperimentAction> kActions{{"kill", ExperimentAction::kKill},
                                                                {"pause", ExperimentAction::kPause},
                                                                {"activate", ExperimentAction::kActivate},
                                                                {"archive", ExperimentAction::kArchive},
                                                                {"unarchive", ExperimentAction::kUnarchive}};
  auto action = kActions.find(name);
  if (Status s = CheckManages(ctx, req, *id, name); !s.ok()) co_return ApiResponse::Error(s);
  if (action == kActions.end())
    co_return ApiResponse::Error(NotFound("unknown experiment action \"" + name +
                                          "\"; use pause, activate, kill, archive or unarchive"));
  ApiResponse done = co_await OnLifecycle(ctx, [&](Lifecycle& l) {
    Status s;
    switch (action->second) {
      case ExperimentAction::kKill:
        s = l.experiments().Kill(*id);
        break;
      case ExperimentAction::kPause:
        s = l.experiments().Pause(*id, std::chrono::steady_clock::now());
        break;
      case ExperimentAction::kActivate:
        s = l.experiments().Activate(*id);
        break;
      case ExperimentAction::kArchive:
      case ExperimentAction::kUnarchive:
        s = l.experiments().SetArchived(*id, action->second == ExperimentAction::kArchive);
        break;
    }
    return s.ok() ? ApiResponse{} : ApiResponse::Error(s);
  });
  if (done.status != 200) co_return done;
  auto view = ExperimentView(ctx, *id);
  if (!view.ok()) co_return ApiResponse::Error(view.status());
  co_return ApiResponse::Json(*view);
}

// A retention change: the config rewritten with it (common/config_retention.h)
// and checked, stored, remembered, and its checkpoints collected under the
// new counts at once. The logs follow at the next retention pass.
Status ChangeRetention(ApiContext& ctx, Lifecycle& l, int64_t id, const RetentionPatch& patch) {
  auto exp = ctx.store.GetExperiment(id);
  if (!exp.ok()) return exp.status();
  auto text = WithRetention(exp->config_yaml, patch);
  if (!text.ok()) return text.status();
  auto parsed = ParseExperimentConfig(*text);
  if (!parsed.ok())
    return InvalidArgument("experiment " + std::to_string(id) +
                           "'s config does not take the change: " + parsed.status().message());
  if (Status s = ctx.store.SetExperimentConfig(id, *text); !s.ok()) return s;
  l.settings().Remember(id, std::move(parsed).value());
  l.checkpoints().Collect(id);
  spdlog::info("[experiments] experiment {}: checkpoint and log retention changed", id);
  return Status::Ok();
}

// PATCH {"name", "description", "labels", "priority", "weight",
// "max_slots", "checkpoint_storage", "log_retention_days"}: how the
// experiment is named and found, its scheduling, live, and how long it keeps
// checkpoints and logs. What an admin sets bounds what the owner may set after. Every field
// is checked before anything changes.
boost::asio::awaitable<ApiResponse> Patch(ApiContext& ctx, ApiRequest& req) {
  auto id = ParseId(req.params[0], "experiment id");
  if (!id.ok()) co_return ApiResponse::Error(id.status());
  if (Status s = CheckManages(ctx, req, *id, "change"); !s.ok()) co_return ApiResponse::Error(s);
  auto body = ParseJsonBody(req);
  if (!body.ok()) co_return ApiResponse::Error(body.status());
  const bool was_empty = body->is_object() && body->empty();
  auto info = TakeExperimentInfo(*body);
  if (!info.ok()) co_return ApiResponse::Error(info.status());
  auto retention = TakeRetentionPatch(*body);
  if (!retention.ok()) co_return ApiResponse::Error(retention.status());
  const bool scheduling = was_empty || !body->is_object() || !body->empty();
  Result<ResourcesPatch> patch = ResourcesPatch{};
  if (scheduling) patch = DecodeResourcesPatch(*body);
  if (!patch.ok()) co_return ApiResponse::Error(patch.status());
  // Both on the lifecycle's thread, which writes to the store (never an io thread).
  ApiResponse done = co_await OnLifecycle(ctx, [&](Lifecycle& l) {
    if (scheduling) {
      Status s = l.settings().SetResources(*id, *patch, req.principal->admin());
      if (!s.ok()) return ApiResponse::Error(s);
      l.scheduling().MarkDirty(l.settings().Resources(*id).pool);
    }
    if (info->name || info->description || info->labels)
      if (Status s = ctx.store.SetExperimentInfo(*id, *info); !s.ok()) return ApiResponse::Error(s);
    if (!retention->empty())
      if (Status s = ChangeRetention(ctx, l, *id, *retention); !s.ok()) return ApiResponse::Error(s);
    return ApiResponse{};
  });
  if (done.status != 200) co_return done;
  auto view = ExperimentView(ctx, *id);
  if (!view.ok()) co_return ApiResponse::Error(view.status());
  co_return ApiResponse::Json(*view);
}

// Why experiment `id` must stay: another experiment starts its trials from
// one of its checkpoints (warm start); Ok when none does.
Status WarmStartDependants(Store& store, int64_t id) {
  auto trials = store.ListTrials(id);
  if (!trials.ok()) return trials.status();
  std::map<std::string, int64_t> own;  // uuid -> trial
  for (const auto& t : *trials) {
    auto checkpoints = store.ListCheckpoints(t.id);
    if (!checkpoints.ok()) return checkpoints.status();
    for (const auto& c : *checkpoints) own[c.uuid] = t.id;
  }
  for (int64_t offset = 0;;) {
    auto page = store.ListExperiments(1000, offset);
    if (!page.ok()) return page.status();
    for (const auto& e : page->items)
      if (e.id != id && own.contains(e.warm_start_checkpoint))
        return Conflict("experiment " + std::to_string(e.id) + " starts from checkpoint " +
                        e.warm_start_checkpoint + " of trial " +
                        std::to_string(own[e.warm_start_checkpoint]) + "; delete it first");
    offset += static_cast<int64_t>(page->items.size());
    if (page->items.empty() || offset >= page->total) return Status::Ok();
  }
}

// DELETE /experiments/{id}: its owner or an admin, once it has ended. The
// mark is written before the answer (202); the files and rows go on a
// worker thread (DeleteExperimentNow), and a master stopped halfway
// finishes after its restart.
boost::asio::awaitable<ApiResponse> Delete(ApiContext& ctx, ApiRequest& req) {
  auto id = ParseId(req.params[0], "experiment id");
  if (!id.ok()) co_return ApiResponse::Error(id.status());
  if (Status s = CheckManages(ctx, req, *id, "delete"); !s.ok()) co_return ApiResponse::Error(s);
  ApiResponse marked = co_await OnLifecycle(ctx, [&](Lifecycle&) {
    auto exp = ctx.store.GetExperiment(*id);
    if (!exp.ok()) return ApiResponse::Error(exp.status());
    if (exp->deleting) return ApiResponse{};
    if (!IsTerminal(exp->state))
      return ApiResponse::Error(
          Conflict("experiment " + std::to_string(*id) + " is " + std::string(ToString(exp->state)) +
                   "; kill it (ring experiment kill) or let it end before deleting it"));
    if (Status s = WarmStartDependants(ctx.store, *id); !s.ok()) return ApiResponse::Error(s);
    if (Status s = CheckNoModelVersions(ctx.store, *id); !s.ok()) return ApiResponse::Error(s);
    if (Status s = ctx.store.MarkExperimentDeleting(*id); !s.ok()) return ApiResponse::Error(s);
    return ApiResponse{};
  });
  if (marked.status != 200) co_return marked;
  StartExperimentDeletion(ctx, *id);
  co_return ApiResponse::Json({{"id", *id}, {"deleting", true}}, 202);
}

// The experiment's model definition as it was submitted (tar.gz), streamed
// out of the store; who may have it is the checkpoints' rule.
ApiResponse DownloadModelDefinition(ApiContext& ctx, ApiRequest& req) {
  auto id = ParseId(req.params[0], "experiment id");
  if (!id.ok()) return ApiResponse::Error(id.status());
  if (Status s = CheckDownloads(ctx, req, *id, "model definition"); !s.ok()) return ApiResponse::Error(s);
  auto slot = TakeStreamSlot(ctx);
  if (!slot.ok()) return ApiResponse::Error(slot.status());
  ApiResponse r;
  r.content_type = "application/gzip";
  r.stream = MakeModelDefinitionStream(ctx.store, *id, *slot);
  r.headers.emplace_back("Content-Disposition",
                         "attachment; filename=\"experiment_" + std::to_string(*id) + "_model_def.tar.gz\"");
  return r;
}

}  // namespace

void StartExperimentDeletion(ApiContext& ctx, int64_t id) {
  auto run = [&store = ctx.store, &roots = ctx.lifecycle.settings().roots(), id] {
    Status s = DeleteExperimentNow(store, roots, id);
    if (!s.ok() && s.code() != ErrorCode::kNotFound)
      spdlog::warn("[experiments] experiment {}: deletion stopped: {}", id, s.message());
  };
  if (ctx.file_work)
    boost::asio::post(*ctx.file_work, std::move(run));
  else
    run();
}

void RegisterExperimentRoutes(Router& router, ApiContext& ctx) {
  RegisterExperimentSubmitRoutes(router, ctx);
  auto list_cache = std::make_shared<ResponseCache>();
  router.AddSync("GET", "/api/v1/experiments", Access::kUser,
                 [&ctx, list_cache](ApiRequest& r) { return ListExperiments(ctx, r, *list_cache); });
  router.AddSync("GET", "/api/v1/experiments/{id}", Access::kUser,
                 [&ctx](ApiRequest& r) { return GetExperiment(ctx, r); });
  router.Add("GET", "/api/v1/experiments/{id}/trials", Access::kUser,
             [&ctx](ApiRequest& r) { return ListTrials(ctx, r); });
  router.AddSync("GET", "/api/v1/experiments/{id}/model_definition", Access::kUser,
                 [&ctx](ApiRequest& r) { return DownloadModelDefinition(ctx, r); });
  router.Add("PATCH", "/api/v1/experiments/{id}", Access::kUser,
             [&ctx](ApiRequest& r) { return Patch(ctx, r); });
  router.Add("DELETE", "/api/v1/experiments/{id}", Access::kUser,
             [&ctx](ApiRequest& r) { return Delete(ctx, r); });
  router.Add("POST", "/api/v1/experiments/{id}/{action}", Access::kUser,
             [&ctx](ApiRequest& r) { return Action(ctx, r); });
}

}  // namespace ring
