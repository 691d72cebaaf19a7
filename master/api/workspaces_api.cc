// Workspaces (docs/rest.md "Workspaces and projects"): admins create them;
// a user sees the ones they belong to (admins all; the default workspace
// holds every user); a workspace's admins and cluster admins change it, its
// members and its bound pools. Binding a pool that master.yaml keeps for
// allowed_users gives its members that pool, so only a cluster admin binds
// one. Writes run on the lifecycle's thread.
#include <utility>  // before Asio

#include "common/json_fields.h"
#include "master/api/routes.h"
#include "master/api/workspace_views.h"
#include "master/lifecycle/lifecycle.h"
#include "master/lifecycle/read_access.h"
#include "master/notifications/webhook_dispatcher.h"
#include "master/store/store.h"

namespace ring {
namespace {
namespace workspaces_api {  // unique within the unity batch

namespace net = boost::asio;

// The workspace if the caller may see it; a workspace they do not belong to
// is not found, as one that does not exist.
Result<WorkspaceRecord> Visible(ApiContext& ctx, const ApiRequest& req, int64_t id) {
  auto w = ctx.store.GetWorkspace(id);
  if (!w.ok()) return w.status();
  if (req.principal->admin() || IsWorkspaceMember(*w, req.principal->username)) return w;
  return NotFound("workspace " + std::to_string(id) + " not found");
}

Status MayManage(const ApiRequest& req, const WorkspaceRecord& w, const std::string& verb) {
  if (req.principal->admin() || IsWorkspaceAdmin(w, req.principal->username)) return Status::Ok();
  return {ErrorCode::kPermissionDenied,
          "only an admin of workspace \"" + w.name + "\" or a cluster admin may " + verb};
}

ApiResponse List(ApiContext& ctx, ApiRequest& req) {
  auto all = ctx.store.ListWorkspaces();
  if (!all.ok()) return ApiResponse::Error(all.status());
  std::optional<bool> archived;
  if (auto it = req.query.find("archived"); it != req.query.end() && !it->second.empty()) {
    if (it->second != "true" && it->second != "false")
      return ApiResponse::Error(InvalidArgument("query parameter archived must be true or false"));
    archived = it->second == "true";
  }
  nlohmann::json list = nlohmann::json::array();
  for (const auto& w : *all) {
    if (!req.principal->admin() && !IsWorkspaceMember(w, req.principal->username)) continue;
    if (archived && w.archived != *archived) continue;
    list.push_back(WorkspaceJson(w));
  }
  return ApiResponse::Json({{"workspaces", list}, {"total", list.size()}});
}

ApiResponse Get(ApiContext& ctx, ApiRequest& req) {
  auto id = ParseId(req.params[0], "workspace id");
  if (!id.ok()) return ApiResponse::Error(id.status());
  auto w = Visible(ctx, req, *id);
  if (!w.ok()) return ApiResponse::Error(w.status());
  return ApiResponse::Json(WorkspaceJson(*w));
}

// POST {"name", "description"}: its creator is its first ADMIN.
net::awaitable<ApiResponse> Create(ApiContext& ctx, ApiRequest& req) {
  auto body = ParseJsonBody(req);
  if (!body.ok()) co_return ApiResponse::Error(body.status());
  auto fields = ParsePlaceBody(*body, "workspace", false);
  if (!fields.ok()) co_return ApiResponse::Error(fields.status());
  WorkspaceRecord w;
  w.name = *fields->name;
  w.description = fields->description.value_or("");
  w.created_by = req.principal->username;
  w.members = {{req.principal->username, WorkspaceRole::kAdmin}};
  co_return co_await OnLifecycle(ctx, [&](Lifecycle&) {
    auto created = ctx.store.CreateWorkspace(w);
    if (!created.ok()) return ApiResponse::Error(created.status());
    return ApiResponse::Json(WorkspaceJson(*created), 201);
  });
}

// PATCH {"name", "description", "archived"}.
net::awaitable<ApiResponse> Patch(ApiContext& ctx, ApiRequest& req) {
  auto id = ParseId(req.params[0], "workspace id");
  if (!id.ok()) co_return ApiResponse::Error(id.status());
  auto body = ParseJsonBody(req);
  if (!body.ok()) co_return ApiResponse::Error(body.status());
  auto update = ParsePlaceBody(*body, "workspace", true, *id == kDefaultWorkspaceId);
  if (!update.ok()) co_return ApiResponse::Error(update.status());
  const WorkspaceUpdate& u = *update;
  co_return co_await OnLifecycle(ctx, [&](Lifecycle&) {
    auto w = Visible(ctx, req, *id);
    if (!w.ok()) return ApiResponse::Error(w.status());
    if (Status s = MayManage(req, *w, "change it"); !s.ok()) return ApiResponse::Error(s);
    if (Status s = ctx.store.UpdateWorkspace(*id, u); !s.ok()) return ApiResponse::Error(s);
    auto changed = ctx.store.GetWorkspace(*id);
    if (!changed.ok()) return ApiResponse::Error(changed.status());
    return ApiResponse::Json(WorkspaceJson(*changed));
  });
}

// DELETE: with its projects and webhooks, once no project holds an experiment.
net::awaitable<ApiResponse> Delete(ApiContext& ctx, ApiRequest& req) {
  auto id = ParseId(req.params[0], "workspace id");
  if (!id.ok()) co_return ApiResponse::Error(id.status());
  co_return co_await OnLifecycle(ctx, [&](Lifecycle&) {
    auto w = Visible(ctx, req, *id);
    if (!w.ok()) return ApiResponse::Error(w.status());
    if (Status s = MayManage(req, *w, "delete it"); !s.ok()) return ApiResponse::Error(s);
    if (Status s = ctx.store.DeleteWorkspace(*id); !s.ok()) return ApiResponse::Error(s);
    if (ctx.webhooks) {  // its webhooks went with it
      if (Status s = ctx.webhooks->Reload(); !s.ok()) return ApiResponse::Error(s);
    }
    return ApiResponse::Json({{"id", *id}, {"deleted", true}});
  });
}

// PUT /members/{username} {"role": "MEMBER" | "ADMIN"}; DELETE removes.
net::awaitable<ApiResponse> Member(ApiContext& ctx, ApiRequest& req, bool remove) {
  auto id = ParseId(req.params[0], "workspace id");
  if (!id.ok()) co_return ApiResponse::Error(id.status());
  const std::string username = req.params[1];
  WorkspaceMember m{username, WorkspaceRole::kMember};
  if (!remove) {
    auto body = ParseJsonBody(req);
    if (!body.ok()) co_return ApiResponse::Error(body.status());
    if (Status s = CheckKnownFields(*body, {"role"}, "the request body"); !s.ok())
      co_return ApiResponse::Error(s);
    auto role = OptString(*body, "role");
    if (!role.ok()) co_return ApiResponse::Error(role.status());
    if (*role) {
      auto parsed = ParseWorkspaceRole(**role);
      if (!parsed)
        co_return ApiResponse::Error(InvalidArgument("role must be MEMBER or ADMIN, got \"" + **role + "\""));
      m.role = *parsed;
    }
  }
  co_return co_await OnLifecycle(ctx, [&](Lifecycle&) {
    auto w = Visible(ctx, req, *id);
    if (!w.ok()) return ApiResponse::Error(w.status());
    if (Status s = MayManage(req, *w, "change its members"); !s.ok()) return ApiResponse::Error(s);
    if (*id == kDefaultWorkspaceId)
      return ApiResponse::Error(Conflict("the default workspace (Uncategorized) holds every user"));
    Status s;
    if (remove) {
      s = ctx.store.RemoveWorkspaceMember(*id, username);
    } else if (auto user = ctx.store.GetUserByName(username); !user.ok()) {
      s = user.status().code() == ErrorCode::kNotFound ? InvalidArgument("no user named \"" + username + "\"")
                                                       : user.status();
    } else {
      s = ctx.store.SetWorkspaceMember(*id, m);
    }
    if (!s.ok()) return ApiResponse::Error(s);
    auto changed = ctx.store.GetWorkspace(*id);
    if (!changed.ok()) return ApiResponse::Error(changed.status());
    return ApiResponse::Json(WorkspaceJson(*changed));
  });
}

// PUT /pools/{pool} {"default": bool}; DELETE unbinds.
net::awaitable<ApiResponse> Pool(ApiContext& ctx, ApiRequest& req, bool unbind) {
  auto id = ParseId(req.params[0], "workspace id");
  if (!id.ok()) co_return ApiResponse::Error(id.status());
  WorkspacePool p{req.params[1], false};
  if (!unbind) {
    auto body = ParseJsonBody(req);
    if (!body.ok()) co_return ApiResponse::Error(body.status());
    if (Status s = CheckKnownFields(*body, {"default"}, "the request body"); !s.ok())
      co_return ApiResponse::Error(s);
    if (auto d = body->find("default"); d != body->end() && !d->is_null()) {
      if (!d->is_boolean()) co_return ApiResponse::Error(InvalidArgument("default must be true or false"));
      p.is_default = d->get<bool>();
    }
  }
  co_return co_await OnLifecycle(ctx, [&](Lifecycle& l) {
    auto w = Visible(ctx, req, *id);
    if (!w.ok()) return ApiResponse::Error(w.status());
    if (Status s = MayManage(req, *w, "change its pools"); !s.ok()) return ApiResponse::Error(s);
    Status s;
    if (unbind) {
      s = ctx.store.UnbindWorkspacePool(*id, p.pool);
    } else {
      const PoolSettings* pool = nullptr;
      for (const auto& settings : l.scheduling().pools())
        if (settings.name == p.pool) pool = &settings;
      if (pool == nullptr)
        return ApiResponse::Error(InvalidArgument("no resource pool named \"" + p.pool + "\""));
      if (!pool->allowed_users.empty() && !req.principal->admin())
        return ApiResponse::Error(
            {ErrorCode::kPermissionDenied,
             "pool \"" + p.pool +
                 "\" is only for its allowed_users; binding it gives the workspace's members "
                 "that pool, so only a cluster admin may"});
      s = ctx.store.BindWorkspacePool(*id, p);
    }
    if (!s.ok()) return ApiResponse::Error(s);
    auto changed = ctx.store.GetWorkspace(*id);
    if (!changed.ok()) return ApiResponse::Error(changed.status());
    return ApiResponse::Json(WorkspaceJson(*changed));
  });
}

}  // namespace workspaces_api
}  // namespace

void RegisterWorkspaceRoutes(Router& router, ApiContext& ctx) {
  using namespace workspaces_api;
  router.AddSync("GET", "/api/v1/workspaces", Access::kUser, [&ctx](ApiRequest& r) { return List(ctx, r); });
  router.Add("POST", "/api/v1/workspaces", Access::kAdmin, [&ctx](ApiRequest& r) { return Create(ctx, r); });
  router.AddSync("GET", "/api/v1/workspaces/{id}", Access::kUser,
                 [&ctx](ApiRequest& r) { return Get(ctx, r); });
  router.Add("PATCH", "/api/v1/workspaces/{id}", Access::kUser,
             [&ctx](ApiRequest& r) { return Patch(ctx, r); });
  router.Add("DELETE", "/api/v1/workspaces/{id}", Access::kUser,
             [&ctx](ApiRequest& r) { return Delete(ctx, r); });
  router.Add("PUT", "/api/v1/workspaces/{id}/members/{username}", Access::kUser,
             [&ctx](ApiRequest& r) { return Member(ctx, r, false); });
  router.Add("DELETE", "/api/v1/workspaces/{id}/members/{username}", Access::kUser,
             [&ctx](ApiRequest& r) { return Member(ctx, r, true); });
  router.Add("PUT", "/api/v1/workspaces/{id}/pools/{pool}", Access::kUser,
             [&ctx](ApiRequest& r) { return Pool(ctx, r, false); });
  router.Add("DELETE", "/api/v1/workspaces/{id}/pools/{pool}", Access::kUser,
             [&ctx](ApiRequest& r) { return Pool(ctx, r, true); });
}

}  // namespace ring
