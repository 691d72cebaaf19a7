// Projects (docs/rest.md "Workspaces and projects"): the members of a
// workspace create projects in it; a project's creator, its workspace's
// admins and cluster admins change, archive and delete it (once it holds no
// experiments). An experiment moves to another project when its owner or an
// admin asks and the mover belongs to the target's workspace.
#include <utility>  // before Asio

#include "common/json_fields.h"
#include "master/api/routes.h"
#include "master/api/workspace_views.h"
#include "master/lifecycle/lifecycle.h"
#include "master/lifecycle/read_access.h"
#include "master/store/store.h"

namespace ring {
namespace {
namespace projects_api {  // unique within the unity batch

namespace net = boost::asio;

// The project and its workspace, if the caller belongs to it (or is an admin).
struct Placed {
  ProjectRecord project;
  WorkspaceRecord workspace;
};

Result<Placed> Visible(ApiContext& ctx, const ApiRequest& req, int64_t project_id) {
  auto p = ctx.store.GetProject(project_id);
  if (!p.ok()) return p.status();
  auto w = ctx.store.GetWorkspace(p->workspace_id);
  if (!w.ok()) return w.status();
  if (!req.principal->admin() && !IsWorkspaceMember(*w, req.principal->username))
    return NotFound("project " + std::to_string(project_id) + " not found");
  return Placed{*p, *w};
}

Status MayChange(const ApiRequest& req, const Placed& at, const std::string& verb) {
  const auto& who = *req.principal;
  if (who.admin() || at.project.created_by == who.username || IsWorkspaceAdmin(at.workspace, who.username))
    return Status::Ok();
  return {ErrorCode::kPermissionDenied, "project \"" + at.project.name + "\" was created by " +
                                            at.project.created_by + "; only they, an admin of workspace \"" +
                                            at.workspace.name + "\" or a cluster admin may " + verb + " it"};
}

ApiResponse List(ApiContext& ctx, ApiRequest& req) {
  auto id = ParseId(req.params[0], "workspace id");
  if (!id.ok()) return ApiResponse::Error(id.status());
  auto w = ctx.store.GetWorkspace(*id);
  if (!w.ok()) return ApiResponse::Error(w.status());
  if (!req.principal->admin() && !IsWorkspaceMember(*w, req.principal->username))
    return ApiResponse::Error(NotFound("workspace " + std::to_string(*id) + " not found"));
  auto all = ctx.store.ListProjects();
  if (!all.ok()) return ApiResponse::Error(all.status());
  nlohmann::json list = nlohmann::json::array();
  for (const auto& p : *all)
    if (p.workspace_id == *id) list.push_back(ProjectJson(p, w->name));
  return ApiResponse::Json({{"projects", list}, {"total", list.size()}});
}

ApiResponse Get(ApiContext& ctx, ApiRequest& req) {
  auto id = ParseId(req.params[0], "project id");
  if (!id.ok()) return ApiResponse::Error(id.status());
  auto at = Visible(ctx, req, *id);
  if (!at.ok()) return ApiResponse::Error(at.status());
  return ApiResponse::Json(ProjectJson(at->project, at->workspace.name));
}

// POST /workspaces/{id}/projects {"name", "description"}.
net::awaitable<ApiResponse> Create(ApiContext& ctx, ApiRequest& req) {
  auto id = ParseId(req.params[0], "workspace id");
  if (!id.ok()) co_return ApiResponse::Error(id.status());
  auto body = ParseJsonBody(req);
  if (!body.ok()) co_return ApiResponse::Error(body.status());
  auto fields = ParsePlaceBody(*body, "project", false);
  if (!fields.ok()) co_return ApiResponse::Error(fields.status());
  co_return co_await OnLifecycle(ctx, [&](Lifecycle&) {
    auto w = ctx.store.GetWorkspace(*id);
    if (!w.ok()) return ApiResponse::Error(w.status());
    if (!req.principal->admin() && !IsWorkspaceMember(*w, req.principal->username))
      return ApiResponse::Error(NotFound("workspace " + std::to_string(*id) + " not found"));
    if (w->archived)
      return ApiResponse::Error(Conflict("workspace \"" + w->name + "\" is archived; unarchive it first"));
    ProjectRecord p;
    p.workspace_id = *id;
    p.name = *fields->name;
    p.description = fields->description.value_or("");
    p.created_by = req.principal->username;
    auto created = ctx.store.CreateProject(p);
    if (!created.ok()) return ApiResponse::Error(created.status());
    return ApiResponse::Json(ProjectJson(*created, w->name), 201);
  });
}

// PATCH {"name", "description", "archived"}.
net::awaitable<ApiResponse> Patch(ApiContext& ctx, ApiRequest& req) {
  auto id = ParseId(req.params[0], "project id");
  if (!id.ok()) co_return ApiResponse::Error(id.status());
  auto body = ParseJsonBody(req);
  if (!body.ok()) co_return ApiResponse::Error(body.status());
  auto update = ParsePlaceBody(*body, "project", true, *id == kDefaultProjectId);
  if (!update.ok()) co_return ApiResponse::Error(update.status());
  const ProjectUpdate& u = *update;
  co_return co_await OnLifecycle(ctx, [&](Lifecycle&) {
    auto at = Visible(ctx, req, *id);
    if (!at.ok()) return ApiResponse::Error(at.status());
    if (Status s = MayChange(req, *at, "change"); !s.ok()) return ApiResponse::Error(s);
    if (Status s = ctx.store.UpdateProject(*id, u); !s.ok()) return ApiResponse::Error(s);
    auto changed = ctx.store.GetProject(*id);
    if (!changed.ok()) return ApiResponse::Error(changed.status());
    return ApiResponse::Json(ProjectJson(*changed, at->workspace.name));
  });
}

net::awaitable<ApiResponse> Delete(ApiContext& ctx, ApiRequest& req) {
  auto id = ParseId(req.params[0], "project id");
  if (!id.ok()) co_return ApiResponse::Error(id.status());
  co_return co_await OnLifecycle(ctx, [&](Lifecycle&) {
    auto at = Visible(ctx, req, *id);
    if (!at.ok()) return ApiResponse::Error(at.status());
    if (Status s = MayChange(req, *at, "delete"); !s.ok()) return ApiResponse::Error(s);
    if (Status s = ctx.store.DeleteProject(*id); !s.ok()) return ApiResponse::Error(s);
    return ApiResponse::Json({{"id", *id}, {"deleted", true}});
  });
}

// POST /experiments/{id}/move {"project_id"}.
net::awaitable<ApiResponse> Move(ApiContext& ctx, ApiRequest& req) {
  auto id = ParseId(req.params[0], "experiment id");
  if (!id.ok()) co_return ApiResponse::Error(id.status());
  auto body = ParseJsonBody(req);
  if (!body.ok()) co_return ApiResponse::Error(body.status());
  if (Status s = CheckKnownFields(*body, {"project_id"}, "the request body"); !s.ok())
    co_return ApiResponse::Error(s);
  auto target = body->find("project_id");
  if (target == body->end() || !target->is_number_integer() || target->get<int64_t>() < 1)
    co_return ApiResponse::Error(InvalidArgument("project_id is required and must be a project id"));
  const int64_t project_id = target->get<int64_t>();
  if (Status s = CheckManages(ctx, req, *id, "move"); !s.ok()) co_return ApiResponse::Error(s);
  co_return co_await OnLifecycle(ctx, [&](Lifecycle&) {
    auto exp = ctx.store.GetExperiment(*id);
    if (!exp.ok()) return ApiResponse::Error(exp.status());
    if (exp->deleting)
      return ApiResponse::Error(NotFound("experiment " + std::to_string(*id) + " is being deleted"));
    auto at = Visible(ctx, req, project_id);
    if (!at.ok()) {
      if (at.status().code() == ErrorCode::kNotFound)
        return ApiResponse::Error(InvalidArgument("project_id: " + at.status().message() +
                                                  " (or you are not a member of its workspace)"));
      return ApiResponse::Error(at.status());
    }
    if (at->project.archived || at->workspace.archived)
      return ApiResponse::Error(
          Conflict("project \"" + at->project.name + "\" or its workspace is archived"));
    if (Status s = ctx.store.MoveExperiment(*id, project_id); !s.ok()) return ApiResponse::Error(s);
    return ApiResponse::Json({{"id", *id},
                              {"project_id", project_id},
                              {"project", at->project.name},
                              {"workspace_id", at->workspace.id},
                              {"workspace", at->workspace.name}});
  });
}

}  // namespace projects_api
}  // namespace

void RegisterProjectRoutes(Router& router, ApiContext& ctx) {
  using namespace projects_api;
  router.AddSync("GET", "/api/v1/workspaces/{id}/projects", Access::kUser,
                 [&ctx](ApiRequest& r) { return List(ctx, r); });
  router.Add("POST", "/api/v1/workspaces/{id}/projects", Access::kUser,
             [&ctx](ApiRequest& r) { return Create(ctx, r); });
  router.AddSync("GET", "/api/v1/projects/{id}", Access::kUser,
                 [&ctx](ApiRequest& r) { return Get(ctx, r); });
  router.Add("PATCH", "/api/v1/projects/{id}", Access::kUser,
             [&ctx](ApiRequest& r) { return Patch(ctx, r); });
  router.Add("DELETE", "/api/v1/projects/{id}", Access::kUser,
             [&ctx](ApiRequest& r) { return Delete(ctx, r); });
  // Before RegisterExperimentRoutes' POST /experiments/{id}/{action}: the first match wins.
  router.Add("POST", "/api/v1/experiments/{id}/move", Access::kUser,
             [&ctx](ApiRequest& r) { return Move(ctx, r); });
}

}  // namespace ring
