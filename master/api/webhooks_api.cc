// Webhooks (docs/rest.md "Webhooks"): cluster admins create, delete and
// test cluster-wide ones, a workspace's admins (and cluster admins) the
// webhooks of that workspace. A user lists the cluster-wide webhooks and
// those of the workspaces they belong to, with their deliveries, never
// their secrets.
// URL checks resolve host names and tests wait for the receiver, so both
// run on ctx.webhook_work, never on a network thread.
#include <utility>  // before Asio

#include "common/json_fields.h"
#include "common/log_policy.h"
#include "master/api/routes.h"
#include "master/lifecycle/read_access.h"
#include "master/notifications/webhook_dispatcher.h"
#include "master/notifications/webhook_sender.h"
#include "master/notifications/webhook_signature.h"
#include "master/notifications/webhook_url.h"
#include "master/store/store.h"

namespace ring {
namespace {
namespace webhooks_api {  // unique within the unity batch

namespace net = boost::asio;

constexpr size_t kMaxTriggers = 32;
constexpr size_t kMaxRegex = 1024;

// Whether `who` sees webhook `w`: admins all, others the cluster-wide ones
// and those of workspaces they belong to. One they do not see is not found.
Status MayRead(Store& store, const Principal& who, const WebhookRecord& w) {
  if (who.admin() || !w.workspace_id) return Status::Ok();
  auto ws = store.GetWorkspace(*w.workspace_id);
  if (ws.ok() && IsWorkspaceMember(*ws, who.username)) return Status::Ok();
  return NotFound("webhook " + std::to_string(w.id) + " not found");
}

// Who may create, delete and test the webhooks of workspace `workspace_id`
// (none: cluster-wide ones): cluster admins, and that workspace's admins.
Status MayManageWebhooks(Store& store, const Principal& who, std::optional<int64_t> workspace_id,
                         const std::string& verb) {
  if (!workspace_id) {
    if (who.admin()) return Status::Ok();
    return Status(ErrorCode::kPermissionDenied, "only admins may " + verb +
                                                    " cluster-wide webhooks; a workspace's admins " + verb +
                                                    " the webhooks of their workspace (workspace_id)");
  }
  auto ws = store.GetWorkspace(*workspace_id);
  if (!ws.ok()) return ws.status();
  if (who.admin() || IsWorkspaceAdmin(*ws, who.username)) return Status::Ok();
  return Status(ErrorCode::kPermissionDenied, "only an admin of workspace \"" + ws->name +
                                                  "\" or a cluster admin may " + verb + " its webhooks");
}

// The webhook `id` if `who` sees it and may `verb` it.
Result<WebhookRecord> Managed(Store& store, const Principal& who, int64_t id, const std::string& verb) {
  auto w = store.GetWebhook(id);
  if (!w.ok()) return w.status();
  if (Status s = MayRead(store, who, *w); !s.ok()) return s;
  if (Status s = MayManageWebhooks(store, who, w->workspace_id, verb); !s.ok()) return s;
  return w;
}

// The body's workspace_id: absent or null for a cluster-wide webhook; else
// a workspace the caller belongs to that is not archived.
Result<std::optional<int64_t>> ParseWorkspace(Store& store, const Principal& who,
                                              const nlohmann::json& body) {
  auto it = body.find("workspace_id");
  if (it == body.end() || it->is_null()) return std::optional<int64_t>();
  if (!it->is_number_integer()) return InvalidArgument("workspace_id must be a workspace's id or null");
  const int64_t id = it->get<int64_t>();
  auto ws = store.GetWorkspace(id);
  if (!ws.ok() || !(who.admin() || IsWorkspaceMember(*ws, who.username)))
    return InvalidArgument("workspace_id: no workspace " + std::to_string(id));
  if (ws->archived) return Conflict("workspace_id: workspace \"" + ws->name + "\" is archived");
  return std::optional<int64_t>(id);
}

Status CheckName(const nlohmann::json& body) {
  auto it = body.find("name");
  if (it == body.end() || !it->is_string()) return InvalidArgument("name is required and must be a string");
  const std::string name = it->get<std::string>();
  bool ok = !name.empty() && name.size() <= 64;
  for (char c : name)
    ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-');
  if (!ok) return InvalidArgument("name must be 1 to 64 characters of A-Z a-z 0-9 . _ -");
  return Status::Ok();
}

Result<std::vector<WebhookTrigger>> ParseTriggers(const nlohmann::json& body) {
  auto it = body.find("triggers");
  if (it == body.end() || !it->is_array() || it->empty() || it->size() > kMaxTriggers)
    return InvalidArgument("triggers is required: a list of 1 to " + std::to_string(kMaxTriggers) +
                           " {trigger_type, condition}");
  std::vector<WebhookTrigger> out;
  for (size_t i = 0; i < it->size(); ++i) {
    const auto& t = (*it)[i];
    const std::string at = "triggers[" + std::to_string(i) + "]";
    if (!t.is_object()) return InvalidArgument(at + " must be {trigger_type, condition}");
    if (Status s = CheckKnownFields(t, {"trigger_type", "condition"}, at); !s.ok()) return s;
    auto type = ParseWebhookTriggerType(t.value("trigger_type", ""));
    if (!type) return InvalidArgument(at + ".trigger_type must be EXPERIMENT_STATE_CHANGE or TASK_LOG");
    const auto c = t.find("condition");
    if (c == t.end() || !c->is_object()) return InvalidArgument(at + ".condition must be an object");
    WebhookTrigger trigger;
    trigger.type = *type;
    if (*type == WebhookTriggerType::kExperimentStateChange) {
      if (Status s = CheckKnownFields(*c, {"state"}, at + ".condition"); !s.ok()) return s;
      auto state = ParseRunState(c->value("state", ""));
      if (!state)
        return InvalidArgument(at +
                               ".condition.state must be an experiment state such as COMPLETED, ERROR, "
                               "CANCELED, PAUSED or ACTIVE");
      trigger.state = *state;
    } else {
      if (Status s = CheckKnownFields(*c, {"regex"}, at + ".condition"); !s.ok()) return s;
      const auto r = c->find("regex");
      if (r == c->end() || !r->is_string() || r->get<std::string>().empty() ||
          r->get<std::string>().size() > kMaxRegex)
        return InvalidArgument(at + ".condition.regex must be a pattern of 1 to " +
                               std::to_string(kMaxRegex) + " characters");
      trigger.regex = r->get<std::string>();
      std::string error;
      if (!LogPattern::Compile(trigger.regex, error))
        return InvalidArgument(at + ".condition.regex is not a pattern RE2 accepts: " + error);
    }
    out.push_back(std::move(trigger));
  }
  return out;
}

// `workspace` is the name of its workspace (empty for a cluster-wide one).
nlohmann::json WebhookJson(const WebhookRecord& w, const std::string& workspace) {
  nlohmann::json triggers = nlohmann::json::array();
  for (const auto& t : w.triggers) {
    nlohmann::json condition;
    if (t.type == WebhookTriggerType::kExperimentStateChange)
      condition = {{"state", ToString(t.state)}};
    else
      condition = {{"regex", t.regex}};
    triggers.push_back({{"trigger_type", ToString(t.type)}, {"condition", std::move(condition)}});
  }
  return {{"id", w.id},
          {"name", w.name},
          {"url", w.url},
          {"type", ToString(w.type)},
          {"triggers", std::move(triggers)},
          {"workspace_id", w.workspace_id ? nlohmann::json(*w.workspace_id) : nlohmann::json(nullptr)},
          {"workspace", w.workspace_id ? nlohmann::json(workspace) : nlohmann::json(nullptr)},
          {"created_by", w.created_by},
          {"created_at", w.created_at}};
}

std::string WorkspaceName(Store& store, const WebhookRecord& w) {
  if (!w.workspace_id) return "";
  auto ws = store.GetWorkspace(*w.workspace_id);
  return ws.ok() ? ws->name : "";
}

nlohmann::json DeliveryJson(const WebhookDelivery& d) {
  auto event = nlohmann::json::parse(d.event, nullptr, false);
  return {{"id", d.id},
          {"webhook_id", d.webhook_id},
          {"event_type", ToString(d.event_type)},
          {"state", ToString(d.state)},
          {"attempts", d.attempts},
          {"last_status", d.last_status ? nlohmann::json(*d.last_status) : nlohmann::json(nullptr)},
          {"last_error", d.last_error},
          {"created_at", d.created_at},
          {"delivered_at", d.delivered_at.empty() ? nlohmann::json(nullptr) : nlohmann::json(d.delivered_at)},
          {"event", event.is_discarded() ? nlohmann::json(d.event) : event}};
}

net::awaitable<ApiResponse> Create(ApiContext& ctx, ApiRequest& req) {
  if (!ctx.webhooks || !ctx.webhook_sender)
    co_return ApiResponse::Error({ErrorCode::kUnavailable, "webhooks are not available"});
  auto body = ParseJsonBody(req);
  if (!body.ok()) co_return ApiResponse::Error(body.status());
  const auto& j = *body;
  if (Status s = CheckKnownFields(j, {"name", "url", "type", "triggers", "workspace_id"}, "the request body");
      !s.ok())
    co_return ApiResponse::Error(s);
  auto workspace = ParseWorkspace(ctx.store, *req.principal, j);
  if (!workspace.ok()) co_return ApiResponse::Error(workspace.status());
  if (Status s = MayManageWebhooks(ctx.store, *req.principal, *workspace, "create"); !s.ok())
    co_return ApiResponse::Error(s);
  if (Status s = CheckName(j); !s.ok()) co_return ApiResponse::Error(s);
  WebhookRecord w;
  w.name = j["name"].get<std::string>();
  if (!j.contains("url") || !j["url"].is_string())
    co_return ApiResponse::Error(InvalidArgument("url is required and must be a string"));
  w.url = j["url"].get<std::string>();
  auto url = ParseWebhookUrl(w.url);
  if (!url.ok()) co_return ApiResponse::Error(InvalidArgument("url " + url.status().message()));
  if (j.contains("type")) {
    auto type = j["type"].is_string() ? ParseWebhookType(j["type"].get<std::string>()) : std::nullopt;
    if (!type) co_return ApiResponse::Error(InvalidArgument("type must be DEFAULT or SLACK"));
    w.type = *type;
  }
  auto triggers = ParseTriggers(j);
  if (!triggers.ok()) co_return ApiResponse::Error(triggers.status());
  w.triggers = *std::move(triggers);
  w.workspace_id = *workspace;
  w.created_by = req.principal->username;
  w.secret = NewWebhookSecret();
  co_return co_await OffNetworkThread(ctx.webhook_work, [&] {
    auto target = CheckWebhookTarget(*url, ctx.webhook_sender->allow_list(), ResolveHost);
    if (!target.ok()) return ApiResponse::Error(InvalidArgument("url: " + target.status().message()));
    auto id = ctx.store.CreateWebhook(w);
    if (!id.ok()) {
      if (id.status().code() == ErrorCode::kConflict)
        return ApiResponse::Error({ErrorCode::kConflict, "name: " + id.status().message()});
      return ApiResponse::Error(id.status());
    }
    if (Status s = ctx.webhooks->Reload(); !s.ok()) return ApiResponse::Error(s);
    auto stored = ctx.store.GetWebhook(*id);
    if (!stored.ok()) return ApiResponse::Error(stored.status());
    auto out = WebhookJson(*stored, WorkspaceName(ctx.store, *stored));
    out["secret"] = stored->secret;  // shown this once
    return ApiResponse::Json(out, 201);
  });
}

net::awaitable<ApiResponse> Delete(ApiContext& ctx, ApiRequest& req) {
  auto id = ParseId(req.params[0], "webhook id");
  if (!id.ok()) co_return ApiResponse::Error(id.status());
  if (!ctx.webhooks) co_return ApiResponse::Error({ErrorCode::kUnavailable, "webhooks are not available"});
  co_return co_await OffNetworkThread(ctx.webhook_work, [&] {
    if (auto w = Managed(ctx.store, *req.principal, *id, "delete"); !w.ok())
      return ApiResponse::Error(w.status());
    if (Status s = ctx.store.DeleteWebhook(*id); !s.ok()) return ApiResponse::Error(s);
    if (Status s = ctx.webhooks->Reload(); !s.ok()) return ApiResponse::Error(s);
    return ApiResponse::Json({{"id", *id}, {"deleted", true}});
  });
}

net::awaitable<ApiResponse> Test(ApiContext& ctx, ApiRequest& req) {
  auto id = ParseId(req.params[0], "webhook id");
  if (!id.ok()) co_return ApiResponse::Error(id.status());
  if (!ctx.webhooks || !ctx.webhook_sender)
    co_return ApiResponse::Error({ErrorCode::kUnavailable, "webhooks are not available"});
  co_return co_await OffNetworkThread(ctx.webhook_work, [&] {
    auto w = Managed(ctx.store, *req.principal, *id, "test");
    if (!w.ok()) return ApiResponse::Error(w.status());
    auto delivery = ctx.webhooks->AddTest(*w);
    if (!delivery.ok()) return ApiResponse::Error(delivery.status());
    auto sent = ctx.webhook_sender->SendNow(*delivery);
    if (!sent.ok()) return ApiResponse::Error(sent.status());
    return ApiResponse::Json(DeliveryJson(*sent));
  });
}

}  // namespace webhooks_api
}  // namespace

void RegisterWebhookRoutes(Router& router, ApiContext& ctx) {
  using namespace webhooks_api;
  router.AddSync("GET", "/api/v1/webhooks", Access::kUser, [&ctx](ApiRequest& req) {
    std::optional<int64_t> workspace;
    if (auto it = req.query.find("workspace_id"); it != req.query.end() && !it->second.empty()) {
      auto id = ParseId(it->second, "query parameter workspace_id");
      if (!id.ok()) return ApiResponse::Error(id.status());
      workspace = *id;
    }
    auto list = ctx.store.ListWebhooks();
    if (!list.ok()) return ApiResponse::Error(list.status());
    nlohmann::json out = nlohmann::json::array();
    for (const auto& w : *list) {
      if (!MayRead(ctx.store, *req.principal, w).ok()) continue;
      if (workspace && w.workspace_id != workspace) continue;
      out.push_back(WebhookJson(w, WorkspaceName(ctx.store, w)));
    }
    const auto total = out.size();
    return ApiResponse::Json({{"webhooks", std::move(out)}, {"total", total}});
  });
  router.AddSync("GET", "/api/v1/webhooks/{id}/deliveries", Access::kUser, [&ctx](ApiRequest& req) {
    auto id = ParseId(req.params[0], "webhook id");
    if (!id.ok()) return ApiResponse::Error(id.status());
    auto limit = QueryInt(req, "limit", 50, 1, Store::kKeptWebhookDeliveries);
    if (!limit.ok()) return ApiResponse::Error(limit.status());
    auto w = ctx.store.GetWebhook(*id);
    if (!w.ok()) return ApiResponse::Error(w.status());
    if (Status s = MayRead(ctx.store, *req.principal, *w); !s.ok()) return ApiResponse::Error(s);
    auto list = ctx.store.ListWebhookDeliveries(*id, *limit);
    if (!list.ok()) return ApiResponse::Error(list.status());
    nlohmann::json out = nlohmann::json::array();
    for (const auto& d : *list) out.push_back(DeliveryJson(d));
    const auto total = out.size();
    return ApiResponse::Json({{"deliveries", std::move(out)}, {"total", total}});
  });
  router.Add("POST", "/api/v1/webhooks", Access::kUser, [&ctx](ApiRequest& r) { return Create(ctx, r); });
  router.Add("DELETE", "/api/v1/webhooks/{id}", Access::kUser,
             [&ctx](ApiRequest& r) { return Delete(ctx, r); });
  router.Add("POST", "/api/v1/webhooks/{id}/test", Access::kUser,
             [&ctx](ApiRequest& r) { return Test(ctx, r); });
}

}  // namespace ring
