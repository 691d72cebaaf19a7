// Config templates (docs/rest.md "Templates"): named partial experiment
// configs that `POST /experiments` with "template" lays the experiment's
// config over. Any signed-in user reads them and sets a new one; a set
// template is replaced or deleted by who set it first, or an admin.
#include <utility>  // before Asio

#include "common/config_template.h"
#include "common/json_fields.h"
#include "master/api/routes.h"
#include "master/lifecycle/lifecycle.h"
#include "master/store/store.h"

namespace ring {
namespace {
namespace templates_api {  // unique within the unity batch

namespace net = boost::asio;

Status CheckName(const std::string& name) {
  if (name.empty() || name.size() > 64)
    return InvalidArgument("template name must be 1 to 64 characters of A-Z a-z 0-9 . _ -");
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-')
      return InvalidArgument("template name must be 1 to 64 characters of A-Z a-z 0-9 . _ -, got \"" + name +
                             "\"");
  return Status::Ok();
}

nlohmann::json TemplateJson(const TemplateRecord& t) {
  return {{"name", t.name},
          {"config", t.config_yaml},
          {"owner", t.owner},
          {"created_at", t.created_at},
          {"updated_at", t.updated_at}};
}

// Who may replace or delete `name`: who set it first, or an admin.
Status MayChange(const ApiRequest& req, const TemplateRecord& t, const std::string& verb) {
  if (req.principal->Manages(t.owner)) return Status::Ok();
  return Status(ErrorCode::kPermissionDenied, "template " + t.name + " belongs to " + t.owner +
                                                  "; only its owner or an admin may " + verb + " it");
}

net::awaitable<ApiResponse> Put(ApiContext& ctx, ApiRequest& req) {
  const std::string name = req.params[0];
  if (Status s = CheckName(name); !s.ok()) co_return ApiResponse::Error(s);
  auto body = ParseJsonBody(req);
  if (!body.ok()) co_return ApiResponse::Error(body.status());
  if (Status s = CheckKnownFields(*body, {"config"}, "the request body"); !s.ok())
    co_return ApiResponse::Error(s);
  if (!body->contains("config") || !(*body)["config"].is_string())
    co_return ApiResponse::Error(InvalidArgument("config is required and must be YAML text"));
  const std::string config = (*body)["config"].get<std::string>();
  if (config.size() > (1 << 20))
    co_return ApiResponse::Error(InvalidArgument("config must be at most 1 MiB"));
  if (Status s = CheckTemplateText(name, config); !s.ok()) co_return ApiResponse::Error(s);
  co_return co_await OnLifecycle(ctx, [&](Lifecycle&) {
    auto existing = ctx.store.GetTemplate(name);
    if (existing.ok())
      if (Status s = MayChange(req, *existing, "replace"); !s.ok()) return ApiResponse::Error(s);
    if (Status s = ctx.store.SetTemplate({name, config, req.principal->username}); !s.ok())
      return ApiResponse::Error(s);
    auto stored = ctx.store.GetTemplate(name);
    if (!stored.ok()) return ApiResponse::Error(stored.status());
    return ApiResponse::Json(TemplateJson(*stored), existing.ok() ? 200 : 201);
  });
}

net::awaitable<ApiResponse> Delete(ApiContext& ctx, ApiRequest& req) {
  const std::string name = req.params[0];
  co_return co_await OnLifecycle(ctx, [&](Lifecycle&) {
    auto existing = ctx.store.GetTemplate(name);
    if (!existing.ok()) return ApiResponse::Error(existing.status());
    if (Status s = MayChange(req, *existing, "delete"); !s.ok()) return ApiResponse::Error(s);
    if (Status s = ctx.store.DeleteTemplate(name); !s.ok()) return ApiResponse::Error(s);
    return ApiResponse::Json({{"name", name}, {"deleted", true}});
  });
}

}  // namespace templates_api
}  // namespace

void RegisterTemplateRoutes(Router& router, ApiContext& ctx) {
  using namespace templates_api;
  router.AddSync("GET", "/api/v1/templates", Access::kUser, [&ctx](ApiRequest&) {
    auto list = ctx.store.ListTemplates();
    if (!list.ok()) return ApiResponse::Error(list.status());
    nlohmann::json out = nlohmann::json::array();
    for (const auto& t : *list) out.push_back(TemplateJson(t));
    const auto total = out.size();
    return ApiResponse::Json({{"templates", std::move(out)}, {"total", total}});
  });
  router.AddSync("GET", "/api/v1/templates/{name}", Access::kUser, [&ctx](ApiRequest& req) {
    auto t = ctx.store.GetTemplate(req.params[0]);
    if (!t.ok()) return ApiResponse::Error(t.status());
    return ApiResponse::Json(TemplateJson(*t));
  });
  router.Add("PUT", "/api/v1/templates/{name}", Access::kUser,
             [&ctx](ApiRequest& r) { return templates_api::Put(ctx, r); });
  router.Add("DELETE", "/api/v1/templates/{name}", Access::kUser,
             [&ctx](ApiRequest& r) { return templates_api::Delete(ctx, r); });
}

// The experiment's config over template `name`'s (the body's "template"),
// or the config as it is without one.
Result<std::string> WithTemplate(ApiContext& ctx, const nlohmann::json& body, const std::string& config) {
  auto it = body.find("template");
  if (it == body.end() || it->is_null()) return config;
  if (!it->is_string()) return InvalidArgument("template must be a template's name");
  auto t = ctx.store.GetTemplate(it->get<std::string>());
  if (!t.ok()) {
    if (t.status().code() == ErrorCode::kNotFound)
      return InvalidArgument("template: no template named \"" + it->get<std::string>() +
                             "\" (ring template list)");
    return t.status();
  }
  return ApplyTemplate(t->name, t->config_yaml, config);
}

}  // namespace ring
