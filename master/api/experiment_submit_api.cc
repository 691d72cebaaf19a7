// Submitting experiments (POST /experiments, POST /experiments/check): the
// config over its template, the project it goes to and its workspace's
// default pool (experiment_placement.h), the pool's submit rule, every
// config error at its line. Creation runs on the lifecycle's thread.
#include <algorithm>

#include <utility>  // before Asio

#include <boost/asio/awaitable.hpp>

#include "common/archive.h"
#include "common/experiment_config.h"
#include "common/json_fields.h"
#include "master/api/experiment_placement.h"
#include "master/api/experiment_query.h"
#include "master/api/routes.h"
#include "master/lifecycle/lifecycle.h"
#include "master/lifecycle/read_access.h"
#include "master/rm/routing_rm.h"

namespace ring {
namespace {
namespace experiment_submit_api {  // unique within the unity batch

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// A pool may be kept for named users (master.yaml allowed_users). A Slurm
// pool whose jobs run as their owners needs the owner's linked account; one
// whose jobs all run as the master's (single identity) warns what that
// gives up.
Status MaySubmit(ApiContext& ctx, Lifecycle& l, const std::string& pool, const std::string& owner, bool admin,
                 std::vector<ConfigIssue>* warnings) {
  for (const auto& settings : l.scheduling().pools()) {
    if (settings.name != pool || MaySubmitTo(settings, owner, admin)) continue;
    // A workspace the user belongs to may be bound to it.
    auto bound = PoolsBoundFor(ctx.store, owner);
    if (!bound.ok()) return bound.status();
    if (std::find(bound->begin(), bound->end(), pool) != bound->end()) continue;
    return {ErrorCode::kPermissionDenied,
            "resources.resource_pool: pool \"" + pool + "\" is only for its allowed_users (" +
                JoinNames(settings.allowed_users) + "), the members of workspaces bound to it, and admins; " +
                owner + " may not submit to it"};
  }
  if (!ctx.routing) return Status::Ok();
  for (const auto& slurm : ctx.routing->slurm()) {
    if (slurm->pool() != pool) continue;
    if (!slurm->RunsAsOwner()) {
      if (warnings)
        warnings->push_back(
            {"resources.resource_pool", 0,
             "pool \"" + pool +
                 "\" is single-identity: its Slurm jobs all run as the master's Unix account, so "
                 "other users' trials there can read and change this experiment's files and "
                 "checkpoints (docs/slurm.md)"});
      continue;
    }
    auto user = ctx.store.GetUserByName(owner);
    if (!user.ok() || !user->unix_account)
      return InvalidArgument("resources.resource_pool: pool \"" + pool +
                             "\" runs each Slurm job as its owner's Unix account, and " + owner +
                             " has none linked: an admin links one with `ring user link-unix " + owner +
                             " --unix-user NAME`");
  }
  return Status::Ok();
}

// Who submits, with the master's reading rule for others' checkpoints (a
// warm start's source is read under the rule of checkpoint downloads).
Submitter SubmitterOf(const ApiContext& ctx, const ApiRequest& req) {
  Submitter who;
  if (req.principal) who.username = req.principal->username;
  who.admin = req.principal && req.principal->admin();
  who.team_readable = ctx.experiments_team_readable;
  return who;
}

// The answer to a config with errors: every error, each with its path and line.
ApiResponse ConfigErrors(const ConfigCheck& check, int http_status) {
  nlohmann::json body = {
      {"error", {{"code", ErrorCodeName(ErrorCode::kInvalidConfig)}, {"message", check.ErrorText()}}},
      {"errors", check.IssuesJson(check.errors)},
      {"warnings", check.IssuesJson(check.warnings)}};
  return ApiResponse::Json(body, http_status);
}

// POST /api/v1/experiments/check: a dry run of creation's checks of a config.
boost::asio::awaitable<ApiResponse> CheckExperiment(ApiContext& ctx, ApiRequest& req) {
  auto body = ParseJsonBody(req);
  if (!body.ok()) co_return ApiResponse::Error(body.status());
  const auto& j = *body;
  if (Status s = CheckKnownFields(j, {"config", "template", "project_id"}, "the request body"); !s.ok())
    co_return ApiResponse::Error(s);
  if (!j.contains("config") || !j["config"].is_string())
    co_return ApiResponse::Error(
        InvalidArgument("config is required and must be the YAML text of the experiment"));
  std::optional<int64_t> project_id;
  if (auto p = j.find("project_id"); p != j.end() && !p->is_null()) {
    if (!p->is_number_integer() || p->get<int64_t>() < 1)
      co_return ApiResponse::Error(InvalidArgument("project_id must be a project id"));
    project_id = p->get<int64_t>();
  }
  auto templated = WithTemplate(ctx, j, j["config"].get<std::string>());
  if (!templated.ok()) co_return ApiResponse::Error(templated.status());
  // Where it would go, and the pool its workspace would give it, as create does.
  auto placed = PlaceSubmission(ctx.store, *req.principal, project_id, *templated);
  if (!placed.ok()) co_return ApiResponse::Error(placed.status());
  auto with_pool = WithWorkspacePool(*templated, placed->workspace);
  if (!with_pool.ok()) co_return ApiResponse::Error(with_pool.status());
  const std::string config = *with_pool;
  Submitter who = SubmitterOf(ctx, req);
  who.project_id = placed->project.id;
  co_return co_await OnLifecycle(ctx, [&](Lifecycle& l) {
    ConfigCheck check = l.experiments().Check(config, who);
    if (check.config)
      if (Status s = MaySubmit(ctx, l, check.config->resources.resource_pool, who.username, who.admin,
                               &check.warnings);
          !s.ok())
        check.errors.push_back({"resources.resource_pool", 0, s.message()});
    return ApiResponse::Json({{"valid", check.errors.empty()},
                              {"errors", check.IssuesJson(check.errors)},
                              {"warnings", check.IssuesJson(check.warnings)}},
                             200);
  });
}

boost::asio::awaitable<ApiResponse> Submit(ApiContext& ctx, const ApiRequest& req, const std::string& config,
                                           const std::string& model, bool activate,
                                           std::optional<int64_t> parent, std::optional<int64_t> project_id);

boost::asio::awaitable<ApiResponse> CreateExperiment(ApiContext& ctx, ApiRequest& req) {
  auto body = ParseJsonBody(req);
  if (!body.ok()) co_return ApiResponse::Error(body.status());
  const auto& j = *body;
  if (Status s = CheckKnownFields(
          j, {"config", "model_definition", "activate", "template", "forked_from", "project_id"},
          "the request body");
      !s.ok())
    co_return ApiResponse::Error(s);
  if (!j.contains("config") || !j["config"].is_string())
    co_return ApiResponse::Error(
        InvalidArgument("config is required and must be the YAML text of the experiment"));
  // A fork: the model definition is the parent's, read from the store
  // under the rule of model downloads.
  std::optional<int64_t> parent;
  if (auto f = j.find("forked_from"); f != j.end() && !f->is_null()) {
    if (!f->is_number_integer() || f->get<int64_t>() < 1)
      co_return ApiResponse::Error(InvalidArgument("forked_from must be an experiment id"));
    parent = f->get<int64_t>();
    if (j.contains("model_definition"))
      co_return ApiResponse::Error(
          InvalidArgument("model_definition and forked_from: a fork runs its parent's model definition"));
    if (Status s = CheckDownloads(ctx, req, *parent, "model definition"); !s.ok()) {
      if (s.code() == ErrorCode::kNotFound)
        co_return ApiResponse::Error(
            InvalidArgument("forked_from: experiment " + std::to_string(*parent) + " not found"));
      co_return ApiResponse::Error(s);
    }
    if (auto exp = ctx.store.GetExperiment(*parent); !exp.ok() || exp->deleting)
      co_return ApiResponse::Error(
          InvalidArgument("forked_from: experiment " + std::to_string(*parent) + " not found"));
  } else if (!j.contains("model_definition") || !j["model_definition"].is_string()) {
    co_return ApiResponse::Error(InvalidArgument("model_definition is required and must be a base64 tar.gz"));
  }
  if (j.contains("activate") && !j["activate"].is_boolean())
    co_return ApiResponse::Error(InvalidArgument("activate must be true or false"));
  std::optional<int64_t> project_id;
  if (auto p = j.find("project_id"); p != j.end() && !p->is_null()) {
    if (!p->is_number_integer() || p->get<int64_t>() < 1)
      co_return ApiResponse::Error(InvalidArgument("project_id must be a project id"));
    project_id = p->get<int64_t>();
  }
  Result<std::string> model =
      parent ? ctx.store.GetModelDefinition(*parent) : Base64Decode(j["model_definition"].get<std::string>());
  if (!model.ok())
    co_return ApiResponse::Error(InvalidArgument("model_definition: " + model.status().message()));
  auto templated = WithTemplate(ctx, j, j["config"].get<std::string>());
  if (!templated.ok()) co_return ApiResponse::Error(templated.status());
  // A fork stays beside its parent unless the request or its config names a project.
  if (parent && !project_id && !ConfigNamesProject(*templated))
    project_id = ctx.store.GetExperiment(*parent)->project_id;
  co_return co_await Submit(ctx, req, *templated, *model, j.value("activate", true), parent, project_id);
}

boost::asio::awaitable<ApiResponse> Submit(ApiContext& ctx, const ApiRequest& req,
                                           const std::string& submitted, const std::string& model,
                                           bool activate, std::optional<int64_t> parent,
                                           std::optional<int64_t> project_id) {
  Submitter who = SubmitterOf(ctx, req);
  // Its project (the default one unless named) and the pool its workspace's
  // default binding gives a config that names none.
  auto placed = PlaceSubmission(ctx.store, *req.principal, project_id, submitted);
  if (!placed.ok()) co_return ApiResponse::Error(placed.status());
  who.project_id = placed->project.id;
  auto with_pool = WithWorkspacePool(submitted, placed->workspace);
  if (!with_pool.ok()) co_return ApiResponse::Error(with_pool.status());
  const std::string& config = *with_pool;
  const std::string pool = SummarizeConfig(config).resources.resource_pool;
  co_return co_await OnLifecycle(ctx, [&](Lifecycle& l) {
    std::vector<ConfigIssue> pool_warnings, warnings;
    if (Status s = MaySubmit(ctx, l, pool, who.username, who.admin, &pool_warnings); !s.ok())
      return ApiResponse::Error(s);
    auto id = l.experiments().Create(config, model, activate, who, &warnings, parent);
    warnings.insert(warnings.end(), pool_warnings.begin(), pool_warnings.end());
    if (!id.ok()) {
      if (id.status().code() != ErrorCode::kInvalidConfig) return ApiResponse::Error(id.status());
      ConfigCheck check = l.experiments().Check(config, who);
      if (check.errors.empty()) return ApiResponse::Error(id.status());
      return ConfigErrors(check, HttpStatusFor(ErrorCode::kInvalidConfig));
    }
    ConfigCheck shown;
    shown.file_name = "experiment.yaml";
    return ApiResponse::Json({{"id", *id}, {"warnings", shown.IssuesJson(warnings)}}, 201);
  });
}

}  // namespace experiment_submit_api
}  // namespace

// A plain function around the coroutine: its frame holds lambdas of this
// file's unnamed namespace.
boost::asio::awaitable<ApiResponse> SubmitExperiment(ApiContext& ctx, const ApiRequest& req,
                                                     const std::string& config, const std::string& model,
                                                     bool activate, std::optional<int64_t> parent,
                                                     std::optional<int64_t> project_id) {
  return experiment_submit_api::Submit(ctx, req, config, model, activate, parent, project_id);
}

void RegisterExperimentSubmitRoutes(Router& router, ApiContext& ctx) {
  router.Add("POST", "/api/v1/experiments", Access::kUser,
             [&ctx](ApiRequest& r) { return experiment_submit_api::CreateExperiment(ctx, r); });
  router.Add("POST", "/api/v1/experiments/check", Access::kUser,
             [&ctx](ApiRequest& r) { return experiment_submit_api::CheckExperiment(ctx, r); });
}

}  // namespace ring
