// The model registry (docs/rest.md "Models"): named models whose versions
// are registered checkpoints, as Determined's. Any signed-in user reads
// them where experiments are team-readable (on a private master, a model
// they own or one with a version they may read: SeenModel) and creates a
// model, which is theirs; its owner or an admin changes
// it, registers, edits and deletes its versions, and deletes it (with its
// versions). Writes run on the lifecycle's thread, where garbage collection
// runs too: a checkpoint is never collected between the check that it is
// ACTIVE and its registration, and a version deleted lets the policy of its
// experiment apply to its checkpoint again (Checkpoints::Release).
#include <algorithm>
#include <cctype>
#include <limits>
#include <utility>  // before Asio

#include <spdlog/spdlog.h>

#include "master/api/model_requests.h"
#include "master/api/routes.h"
#include "master/lifecycle/lifecycle.h"
#include "master/store/store.h"

namespace ring {
namespace {
namespace models_api {  // unique within the unity batch

namespace net = boost::asio;

// The version's checkpoint and where it came from; null when it cannot be read.
nlohmann::json CheckpointSummary(Store& store, const std::string& uuid) {
  auto c = store.GetCheckpoint(uuid);
  if (!c.ok()) return nullptr;
  nlohmann::json j{{"uuid", c->uuid},
                   {"state", std::string(ToString(c->state))},
                   {"experiment_id", nullptr},
                   {"trial_id", c->trial_id},
                   {"batches", c->batches}};
  if (auto t = store.GetTrial(c->trial_id); t.ok()) j["experiment_id"] = t->experiment_id;
  return j;
}

nlohmann::json VersionView(Store& store, const ModelVersionRecord& v) {
  return ModelVersionJson(v, CheckpointSummary(store, v.checkpoint_uuid));
}

// Who may change model `m`: its owner, or an admin.
Status MayChange(const ApiRequest& req, const ModelRecord& m, const std::string& verb) {
  if (req.principal && req.principal->Manages(m.owner)) return Status::Ok();
  return Status(ErrorCode::kPermissionDenied,
                "model " + m.name + " belongs to " + m.owner + "; only its owner or an admin may " + verb);
}

// Whether the caller may read version `v`: the reading rule of its
// checkpoint's experiment (route_helpers CheckReads).
Status CheckVersionReads(ApiContext& ctx, const ApiRequest& req, const ModelVersionRecord& v) {
  auto c = ctx.store.GetCheckpoint(v.checkpoint_uuid);
  if (!c.ok()) return c.status();
  return CheckTrialReads(ctx, req, c->trial_id, "model versions");
}

// Model `m` as the caller sees it (docs/security.md "Who reads what"), or
// nullopt when they may not see it: num_versions counts only the versions
// they may read. Where experiments are team-readable, and for an admin,
// that is every version and every model; on a private master a non-admin
// sees a model they own or one with at least one version they may read.
Result<std::optional<nlohmann::json>> SeenModel(ApiContext& ctx, const ApiRequest& req, ModelRecord m) {
  if (!req.principal) return Status(ErrorCode::kUnauthenticated, "sign in first");
  if (ctx.experiments_team_readable || req.principal->admin())
    return std::optional<nlohmann::json>(ModelJson(m));
  auto versions = ctx.store.ListModelVersions(m.name);
  if (!versions.ok()) return versions.status();
  int64_t readable = 0;
  for (const auto& v : *versions) {
    Status s = CheckVersionReads(ctx, req, v);
    if (s.ok()) {
      ++readable;
    } else if (s.code() != ErrorCode::kPermissionDenied) {
      return s;
    }
  }
  if (readable == 0 && m.owner != req.principal->username) return std::optional<nlohmann::json>();
  m.num_versions = readable;
  return std::optional<nlohmann::json>(ModelJson(m));
}

// SeenModel, or a 403 naming the setting when the caller may not see it.
Result<nlohmann::json> ReadModel(ApiContext& ctx, const ApiRequest& req, const ModelRecord& m) {
  auto seen = SeenModel(ctx, req, m);
  if (!seen.ok()) return seen.status();
  if (!*seen)
    return Status(ErrorCode::kPermissionDenied,
                  "model " + m.name + " belongs to " + m.owner +
                      "; only its owner, an admin or a user who may read one of its versions may read it "
                      "(this master has experiments_team_readable: false)");
  return std::move(**seen);
}

// GET /models?name=&label=&owner=&archived=&limit=&offset=: by name;
// `name` matches any part of a name, ignoring case; `total` counts the
// matches the caller may see (SeenModel).
ApiResponse List(ApiContext& ctx, const ApiRequest& req) {
  for (const auto& [key, value] : req.query)
    if (key != "name" && key != "label" && key != "owner" && key != "archived" && key != "limit" &&
        key != "offset")
      return ApiResponse::Error(InvalidArgument("unknown query parameter \"" + key.substr(0, 64) +
                                                "\" (known: name, label, owner, archived, limit, offset)"));
  auto limit = QueryInt(req, "limit", 100, 1, 1000);
  if (!limit.ok()) return ApiResponse::Error(limit.status());
  auto offset = QueryInt(req, "offset", 0, 0, std::numeric_limits<int64_t>::max());
  if (!offset.ok()) return ApiResponse::Error(offset.status());
  std::optional<bool> archived;
  if (auto it = req.query.find("archived"); it != req.query.end()) {
    if (it->second != "true" && it->second != "false")
      return ApiResponse::Error(
          InvalidArgument("archived must be true or false, got \"" + it->second + "\""));
    archived = it->second == "true";
  }
  auto lower = [](std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  const std::string name = req.query.contains("name") ? lower(req.query.at("name")) : "";
  auto models = ctx.store.ListModels();
  if (!models.ok()) return ApiResponse::Error(models.status());
  nlohmann::json out = nlohmann::json::array();
  int64_t total = 0;
  for (const auto& m : *models) {
    if (!name.empty() && lower(m.name).find(name) == std::string::npos) continue;
    if (auto it = req.query.find("label");
        it != req.query.end() && std::find(m.labels.begin(), m.labels.end(), it->second) == m.labels.end())
      continue;
    if (auto it = req.query.find("owner"); it != req.query.end() && m.owner != it->second) continue;
    if (archived && m.archived != *archived) continue;
    auto seen = SeenModel(ctx, req, m);
    if (!seen.ok()) return ApiResponse::Error(seen.status());
    if (!*seen) continue;
    if (total++ >= *offset && static_cast<int64_t>(out.size()) < *limit) out.push_back(std::move(**seen));
  }
  return ApiResponse::Json({{"models", std::move(out)}, {"total", total}});
}

net::awaitable<ApiResponse> Create(ApiContext& ctx, ApiRequest& req) {
  auto body = ParseJsonBody(req);
  if (!body.ok()) co_return ApiResponse::Error(body.status());
  auto model = DecodeNewModel(*body);
  if (!model.ok()) co_return ApiResponse::Error(model.status());
  model->owner = req.principal->username;
  co_return co_await OnLifecycle(ctx, [&](Lifecycle&) {
    auto created = ctx.store.CreateModel(*model);
    if (!created.ok()) {
      if (created.status().code() == ErrorCode::kConflict)
        return ApiResponse::Error(Conflict("name: a model named \"" + model->name + "\" exists already"));
      return ApiResponse::Error(created.status());
    }
    spdlog::info("[models] model {} created by {}", created->name, created->owner);
    return ApiResponse::Json(ModelJson(*created), 201);
  });
}

// PATCH: an archived model changes only with "archived": false in the same
// body (as Determined, which refuses to edit an archived model).
net::awaitable<ApiResponse> Patch(ApiContext& ctx, ApiRequest& req) {
  auto body = ParseJsonBody(req);
  if (!body.ok()) co_return ApiResponse::Error(body.status());
  auto update = DecodeModelUpdate(*body);
  if (!update.ok()) co_return ApiResponse::Error(update.status());
  const std::string name = req.params[0];
  co_return co_await OnLifecycle(ctx, [&](Lifecycle&) {
    auto m = ctx.store.GetModel(name);
    if (!m.ok()) return ApiResponse::Error(m.status());
    if (Status s = MayChange(req, *m, "change it"); !s.ok()) return ApiResponse::Error(s);
    if (m->archived && update->archived.value_or(true))
      return ApiResponse::Error(
          Conflict("model " + name + " is archived: unarchive it (\"archived\": false) to change it"));
    if (Status s = ctx.store.UpdateModel(name, *update); !s.ok()) return ApiResponse::Error(s);
    auto changed = ctx.store.GetModel(name);
    if (!changed.ok()) return ApiResponse::Error(changed.status());
    auto seen = ReadModel(ctx, req, *changed);
    if (!seen.ok()) return ApiResponse::Error(seen.status());
    return ApiResponse::Json(std::move(*seen));
  });
}

// DELETE: the model and its versions, as Determined; their checkpoints are
// then collected as their experiments' policies say.
net::awaitable<ApiResponse> Delete(ApiContext& ctx, ApiRequest& req) {
  const std::string name = req.params[0];
  co_return co_await OnLifecycle(ctx, [&](Lifecycle& l) {
    auto m = ctx.store.GetModel(name);
    if (!m.ok()) return ApiResponse::Error(m.status());
    if (Status s = MayChange(req, *m, "delete it"); !s.ok()) return ApiResponse::Error(s);
    auto removed = ctx.store.DeleteModel(name);
    if (!removed.ok()) return ApiResponse::Error(removed.status());
    for (const auto& v : *removed) l.checkpoints().Release(v.checkpoint_uuid);
    spdlog::info("[models] model {} deleted by {} with {} versions", name, req.principal->username,
                 removed->size());
    return ApiResponse::Json({{"name", name}, {"deleted", true}, {"versions_deleted", removed->size()}});
  });
}

// POST /models/{name}/versions: the checkpoint must be registered, ACTIVE,
// downloadable by the caller, and not of an experiment being deleted.
net::awaitable<ApiResponse> Register(ApiContext& ctx, ApiRequest& req) {
  auto body = ParseJsonBody(req);
  if (!body.ok()) co_return ApiResponse::Error(body.status());
  auto version = DecodeNewModelVersion(*body);
  if (!version.ok()) co_return ApiResponse::Error(version.status());
  version->model = req.params[0];
  version->created_by = req.principal->username;
  co_return co_await OnLifecycle(ctx, [&](Lifecycle&) {
    auto m = ctx.store.GetModel(version->model);
    if (!m.ok()) return ApiResponse::Error(m.status());
    if (Status s = MayChange(req, *m, "register its versions"); !s.ok()) return ApiResponse::Error(s);
    if (m->archived)
      return ApiResponse::Error(
          Conflict("model " + m->name + " is archived and takes no new versions: unarchive it first"));
    const std::string& uuid = version->checkpoint_uuid;
    auto c = ctx.store.GetCheckpoint(uuid);
    if (!c.ok()) {
      if (c.status().code() == ErrorCode::kNotFound)
        return ApiResponse::Error(InvalidArgument("checkpoint_uuid: no checkpoint " + uuid +
                                                  " is registered (ring checkpoint list EXPERIMENT_ID)"));
      return ApiResponse::Error(c.status());
    }
    if (c->state != CheckpointState::kActive)
      return ApiResponse::Error(Conflict("checkpoint_uuid: checkpoint " + uuid + " is " +
                                         std::string(ToString(c->state)) +
                                         " (garbage collected); only an ACTIVE checkpoint can be a version"));
    auto trial = ctx.store.GetTrial(c->trial_id);
    if (!trial.ok()) return ApiResponse::Error(trial.status());
    if (Status s = CheckDownloads(ctx, req, trial->experiment_id, "checkpoints"); !s.ok())
      return ApiResponse::Error(Status(s.code(), "checkpoint_uuid: " + s.message()));
    auto exp = ctx.store.GetExperiment(trial->experiment_id);
    if (!exp.ok()) return ApiResponse::Error(exp.status());
    if (exp->deleting)
      return ApiResponse::Error(Conflict("checkpoint_uuid: checkpoint " + uuid + " belongs to experiment " +
                                         std::to_string(exp->id) + ", which is being deleted"));
    auto added = ctx.store.AddModelVersion(*version);
    if (!added.ok()) return ApiResponse::Error(added.status());
    spdlog::info("[models] model {} version {}: checkpoint {} of experiment {} trial {} registered by {}",
                 added->model, added->version, uuid, exp->id, c->trial_id, added->created_by);
    return ApiResponse::Json(VersionView(ctx.store, *added), 201);
  });
}

// The model of a version route, checked for `verb` by its owner or an admin.
Result<ModelRecord> ChangeableModel(ApiContext& ctx, const ApiRequest& req, const std::string& verb) {
  auto m = ctx.store.GetModel(req.params[0]);
  if (!m.ok()) return m.status();
  if (Status s = MayChange(req, *m, verb); !s.ok()) return s;
  return m;
}

net::awaitable<ApiResponse> PatchVersion(ApiContext& ctx, ApiRequest& req) {
  auto number = ParseModelVersion(req.params[1]);
  if (!number.ok()) co_return ApiResponse::Error(number.status());
  auto body = ParseJsonBody(req);
  if (!body.ok()) co_return ApiResponse::Error(body.status());
  auto update = DecodeModelVersionUpdate(*body);
  if (!update.ok()) co_return ApiResponse::Error(update.status());
  co_return co_await OnLifecycle(ctx, [&](Lifecycle&) {
    auto m = ChangeableModel(ctx, req, "change its versions");
    if (!m.ok()) return ApiResponse::Error(m.status());
    if (Status s = ctx.store.UpdateModelVersion(m->name, *number, *update); !s.ok())
      return ApiResponse::Error(s);
    auto changed = ctx.store.GetModelVersion(m->name, *number);
    if (!changed.ok()) return ApiResponse::Error(changed.status());
    return ApiResponse::Json(VersionView(ctx.store, *changed));
  });
}

net::awaitable<ApiResponse> DeleteVersion(ApiContext& ctx, ApiRequest& req) {
  auto number = ParseModelVersion(req.params[1]);
  if (!number.ok()) co_return ApiResponse::Error(number.status());
  co_return co_await OnLifecycle(ctx, [&](Lifecycle& l) {
    auto m = ChangeableModel(ctx, req, "delete its versions");
    if (!m.ok()) return ApiResponse::Error(m.status());
    auto v = ctx.store.GetModelVersion(m->name, *number);
    if (!v.ok()) return ApiResponse::Error(v.status());
    if (Status s = ctx.store.DeleteModelVersion(m->name, *number); !s.ok()) return ApiResponse::Error(s);
    l.checkpoints().Release(v->checkpoint_uuid);
    spdlog::info("[models] model {} version {} (checkpoint {}) deleted by {}", m->name, *number,
                 v->checkpoint_uuid, req.principal->username);
    return ApiResponse::Json({{"model", m->name}, {"version", *number}, {"deleted", true}});
  });
}

}  // namespace models_api
}  // namespace

void RegisterModelRoutes(Router& router, ApiContext& ctx) {
  router.AddSync("GET", "/api/v1/models", Access::kUser,
                 [&ctx](ApiRequest& r) { return models_api::List(ctx, r); });
  router.Add("POST", "/api/v1/models", Access::kUser,
             [&ctx](ApiRequest& r) { return models_api::Create(ctx, r); });
  router.AddSync("GET", "/api/v1/models/{name}", Access::kUser, [&ctx](ApiRequest& r) {
    auto m = ctx.store.GetModel(r.params[0]);
    if (!m.ok()) return ApiResponse::Error(m.status());
    auto seen = models_api::ReadModel(ctx, r, *m);
    if (!seen.ok()) return ApiResponse::Error(seen.status());
    return ApiResponse::Json(std::move(*seen));
  });
  router.Add("PATCH", "/api/v1/models/{name}", Access::kUser,
             [&ctx](ApiRequest& r) { return models_api::Patch(ctx, r); });
  router.Add("DELETE", "/api/v1/models/{name}", Access::kUser,
             [&ctx](ApiRequest& r) { return models_api::Delete(ctx, r); });
  router.AddSync("GET", "/api/v1/models/{name}/versions", Access::kUser, [&ctx](ApiRequest& r) {
    auto m = ctx.store.GetModel(r.params[0]);
    if (!m.ok()) return ApiResponse::Error(m.status());
    auto seen = models_api::ReadModel(ctx, r, *m);
    if (!seen.ok()) return ApiResponse::Error(seen.status());
    auto versions = ctx.store.ListModelVersions(r.params[0]);
    if (!versions.ok()) return ApiResponse::Error(versions.status());
    nlohmann::json out = nlohmann::json::array();
    // Only the versions whose experiments the caller may read.
    for (const auto& v : *versions)
      if (models_api::CheckVersionReads(ctx, r, v).ok()) out.push_back(models_api::VersionView(ctx.store, v));
    const auto total = out.size();
    return ApiResponse::Json({{"model", std::move(*seen)}, {"versions", std::move(out)}, {"total", total}});
  });
  router.Add("POST", "/api/v1/models/{name}/versions", Access::kUser,
             [&ctx](ApiRequest& r) { return models_api::Register(ctx, r); });
  router.AddSync("GET", "/api/v1/models/{name}/versions/{version}", Access::kUser, [&ctx](ApiRequest& r) {
    auto number = ParseModelVersion(r.params[1]);
    if (!number.ok()) return ApiResponse::Error(number.status());
    auto v = ctx.store.GetModelVersion(r.params[0], *number);
    if (!v.ok()) return ApiResponse::Error(v.status());
    if (Status s = models_api::CheckVersionReads(ctx, r, *v); !s.ok()) return ApiResponse::Error(s);
    return ApiResponse::Json(models_api::VersionView(ctx.store, *v));
  });
  router.Add("PATCH", "/api/v1/models/{name}/versions/{version}", Access::kUser,
             [&ctx](ApiRequest& r) { return models_api::PatchVersion(ctx, r); });
  router.Add("DELETE", "/api/v1/models/{name}/versions/{version}", Access::kUser,
             [&ctx](ApiRequest& r) { return models_api::DeleteVersion(ctx, r); });
}

}  // namespace ring
