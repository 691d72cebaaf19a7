// Tasks that are not trials, one set of routes per kind: /api/v1/commands,
// /api/v1/shells and /api/v1/notebooks.
// Create, list, get, kill and logs; a task is read and killed by its owner
// or an admin only (another user gets 403), and no allocation token may
// create one.
#include <algorithm>
#include <map>

#include <utility>  // before Asio

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "common/archive.h"
#include "common/json_fields.h"
#include "master/api/json_views.h"
#include "master/api/routes.h"
#include "master/lifecycle/lifecycle.h"
#include "master/lifecycle/read_access.h"
#include "master/proxy/task_proxy.h"
#include "master/store/store.h"

namespace ring {
namespace {
namespace tasks_api {  // unique within the unity batch

namespace net = boost::asio;

struct TaskRoutes {
  TaskKind kind;
  std::string noun;  // "command": in messages
};

// The flags of POST /commands, each optional; the config text under "config".
Result<TaskFlags> DecodeFlags(const nlohmann::json& j) {
  TaskFlags f;
  if (auto it = j.find("argv"); it != j.end() && !it->is_null()) {
    if (!it->is_array()) return InvalidArgument("argv must be a list of strings");
    for (const auto& a : *it) {
      if (!a.is_string()) return InvalidArgument("argv must be a list of strings");
      f.argv.push_back(a.get<std::string>());
    }
  }
  auto integer = [&](const char* key, std::optional<int64_t>& out) -> Status {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return Status::Ok();
    if (!it->is_number_integer()) return InvalidArgument(std::string(key) + " must be an integer");
    out = it->get<int64_t>();
    return Status::Ok();
  };
  if (Status s = integer("slots", f.slots); !s.ok()) return s;
  if (Status s = integer("priority", f.priority); !s.ok()) return s;
  for (auto [key, out] :
       {std::pair{"resource_pool", &f.resource_pool}, std::pair{"description", &f.description}}) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) continue;
    if (!it->is_string()) return InvalidArgument(std::string(key) + " must be a string");
    *out = it->get<std::string>();
  }
  if (auto it = j.find("preemptible"); it != j.end() && !it->is_null()) {
    if (!it->is_boolean()) return InvalidArgument("preemptible must be true or false");
    f.preemptible = it->get<bool>();
  }
  return f;
}

// The task's latest allocation, or none yet.
std::optional<AllocationRecord> LatestAllocation(Store& store, int64_t task_id) {
  auto list = store.ListTaskAllocations(task_id);
  if (!list.ok() || list->empty()) return std::nullopt;
  return list->back();
}

nlohmann::json TaskJson(ApiContext& ctx, const TaskRecord& t, const std::optional<AllocationRecord>& a,
                        const std::map<std::string, std::string>& reasons) {
  const TaskSpec& s = t.spec;
  nlohmann::json j = {{"id", t.id},
                      {"kind", ToString(t.kind)},
                      {"owner", t.owner},
                      {"description", s.description},
                      {"argv", s.argv},
                      {"slots", s.slots},
                      {"resource_pool", s.resource_pool},
                      {"priority", s.priority},
                      {"preemptible", s.preemptible},
                      {"has_context", s.has_context},
                      {"created_at", t.created_at},
                      {"ended_at", t.ended_at.empty() ? nlohmann::json() : nlohmann::json(t.ended_at)},
                      {"state", a ? ToString(a->state) : "TERMINATED"},
                      {"allocation_id", a ? nlohmann::json(a->id) : nlohmann::json()},
                      {"end_cause", nlohmann::json()},
                      {"exit_reason", nlohmann::json()},
                      {"exit_code", nlohmann::json()},
                      {"pending_reason", nlohmann::json()}};
  if (a && a->end_cause) {
    j["end_cause"] = ToString(*a->end_cause);
    j["exit_reason"] = a->exit_reason;
  }
  if (a && a->exit_code) j["exit_code"] = *a->exit_code;
  if (a)
    if (auto r = reasons.find(a->id); r != reasons.end()) j["pending_reason"] = r->second;
  j["idle_timeout_s"] = s.idle_timeout_s ? nlohmann::json(*s.idle_timeout_s) : nlohmann::json();
  if (t.kind == TaskKind::kNotebook) j["notebook_idle_type"] = ToString(s.notebook_idle_type);
  // What it serves through the task proxy (announced by its allocation), if anything.
  j["service"] = nlohmann::json();
  if (ctx.proxy)
    if (auto service = ctx.proxy->services().Lookup(t.id))
      j["service"] = {{"name", service->name}, {"port", service->port}, {"url", ctx.proxy->TaskUrl(t.id)}};
  return j;
}

std::map<std::string, std::string> WaitingReasons(Lifecycle& l) {
  std::map<std::string, std::string> out;
  for (const auto& row : l.scheduling().Jobs())
    if (row.reason) out[row.allocation_id] = *row.reason;
  return out;
}

// The task `id` of this kind that the caller may see: kNotFound for none
// (or one of another kind), kPermissionDenied for another user's.
Result<TaskRecord> Visible(ApiContext& ctx, const ApiRequest& req, const TaskRoutes& r,
                           const std::string& id_text, const std::string& verb) {
  auto id = ParseId(id_text, r.noun + " id");
  if (!id.ok()) return id.status();
  auto task = ctx.store.GetTask(*id);
  if (!task.ok() || task->kind != r.kind) return NotFound(r.noun + " " + id_text + " not found");
  if (!req.principal) return Status(ErrorCode::kUnauthenticated, "sign in first");
  if (!req.principal->Manages(task->owner))
    return Status(ErrorCode::kPermissionDenied, r.noun + " " + id_text + " belongs to " + task->owner +
                                                    "; only its owner or an admin may " + verb + " it");
  return task;
}

net::awaitable<ApiResponse> Create(ApiContext& ctx, ApiRequest& req, TaskRoutes r) {
  auto body = ParseJsonBody(req);
  if (!body.ok()) co_return ApiResponse::Error(body.status());
  const nlohmann::json& j = *body;
  if (Status s = CheckKnownFields(j,
                                  {"config", "config_file", "argv", "slots", "resource_pool", "priority",
                                   "preemptible", "description", "context"},
                                  "the request body");
      !s.ok())
    co_return ApiResponse::Error(s);
  std::string config_text, file_name = "config.yaml", context;
  for (auto [key, out] : {std::pair{"config", &config_text}, std::pair{"config_file", &file_name}}) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) continue;
    if (!it->is_string())
      co_return ApiResponse::Error(InvalidArgument(std::string(key) + " must be a string"));
    *out = it->get<std::string>();
  }
  if (auto it = j.find("context"); it != j.end() && !it->is_null()) {
    if (!it->is_string()) co_return ApiResponse::Error(InvalidArgument("context must be a base64 tar.gz"));
    auto decoded = Base64Decode(it->get<std::string>());
    if (!decoded.ok())
      co_return ApiResponse::Error(InvalidArgument("context: " + decoded.status().message()));
    context = std::move(decoded).value();
  }
  auto flags = DecodeFlags(j);
  if (!flags.ok()) co_return ApiResponse::Error(flags.status());
  auto parsed = ParseTaskConfig(config_text, file_name);
  if (!parsed.ok()) co_return ApiResponse::Error(parsed.status());
  // A shell runs its owner's login shell unless told otherwise (the agent
  // sets SHELL from the account's entry in its host's account database;
  // /bin/sh where that is not there, as in an image without it).
  if (r.kind == TaskKind::kShell && flags->argv.empty() && parsed->argv.empty())
    flags->argv = {"/bin/sh", "-c", "if [ -x \"${SHELL:-}\" ]; then exec \"$SHELL\" -l; fi; exec /bin/sh -l"};
  // A notebook runs Jupyter through the runtime's launcher
  // (trial_runtime/python/ring_notebook.py), which announces it to the proxy.
  if (r.kind == TaskKind::kNotebook && flags->argv.empty() && parsed->argv.empty())
    flags->argv = {"python3", "-m", "ring_notebook"};
  auto spec = ApplyTaskFlags(std::move(parsed).value(), *flags);
  if (!spec.ok()) co_return ApiResponse::Error(spec.status());
  TaskOwner owner{req.principal->username, req.principal->admin(), {}};
  co_return co_await OnLifecycle(ctx, [&](Lifecycle& l) {
    auto bound = PoolsBoundFor(ctx.store, owner.username);
    if (!bound.ok()) return ApiResponse::Error(bound.status());
    owner.bound_pools = *bound;
    auto task = l.tasks().Create(r.kind, owner, std::move(spec).value(), context);
    if (!task.ok()) return ApiResponse::Error(task.status());
    return ApiResponse::Json(TaskJson(ctx, *task, LatestAllocation(ctx.store, task->id), WaitingReasons(l)),
                             201);
  });
}

// Lines after `offset` (the ids of this task's lines), at most `limit`;
// with follow=true waits up to 20 s for a new line while the task lives.
net::awaitable<ApiResponse> Logs(ApiContext& ctx, ApiRequest& req, TaskRoutes r) {
  auto task = Visible(ctx, req, r, req.params[0], "read");
  if (!task.ok()) co_return ApiResponse::Error(task.status());
  auto offset = QueryInt(req, "offset", 0, 0, INT64_MAX);
  auto limit = QueryInt(req, "limit", 5000, 1, 50000);
  for (const auto* q : {&offset, &limit})
    if (!q->ok()) co_return ApiResponse::Error(q->status());
  std::string follow = req.query.count("follow") ? req.query.at("follow") : "false";
  if (follow != "true" && follow != "false" && follow != "1" && follow != "0")
    co_return ApiResponse::Error(InvalidArgument("query parameter follow must be true or false"));
  const bool wait = follow == "true" || follow == "1";
  net::steady_timer timer(co_await net::this_coro::executor);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (;;) {
    auto now_task = ctx.store.GetTask(task->id);
    if (!now_task.ok()) co_return ApiResponse::Error(now_task.status());
    auto logs = ctx.store.GetTaskLogs(task->id, -1, *offset, *limit);
    if (!logs.ok()) co_return ApiResponse::Error(logs.status());
    nlohmann::json list = nlohmann::json::array();
    int64_t last = *offset;
    size_t bytes = 0;
    bool more = static_cast<int64_t>(logs->size()) >= *limit;
    for (const auto& l : *logs) {
      if (!list.empty() && bytes + l.line.size() > ctx.max_log_page_bytes) {
        more = true;
        break;
      }
      bytes += l.line.size();
      list.push_back(LogJson(l));
      last = l.id;
    }
    const bool ended = !now_task->ended_at.empty();
    if (!list.empty() || !wait || ended || std::chrono::steady_clock::now() >= give_up) {
      nlohmann::json answer = {{"logs", list}, {"offset", last}, {"more", more}, {"ended", ended}};
      const auto a = LatestAllocation(ctx.store, task->id);
      answer["exit_code"] = a && a->exit_code ? nlohmann::json(*a->exit_code) : nlohmann::json();
      answer["end_cause"] = a && a->end_cause ? nlohmann::json(ToString(*a->end_cause)) : nlohmann::json();
      co_return ApiResponse::Json(answer);
    }
    timer.expires_after(std::chrono::milliseconds(200));
    co_await timer.async_wait(net::use_awaitable);
  }
}

}  // namespace tasks_api
}  // namespace

void RegisterTaskRoutes(Router& router, ApiContext& ctx, TaskKind kind, const std::string& plural) {
  using namespace tasks_api;
  namespace net = boost::asio;
  const TaskRoutes r{kind, plural.substr(0, plural.size() - 1)};
  const std::string base = "/api/v1/" + plural;
  router.Add("POST", base, Access::kUser, [&ctx, r](ApiRequest& req) { return Create(ctx, req, r); });
  // Your own tasks of this kind, newest first (an admin's: everyone's).
  router.Add("GET", base, Access::kUser, [&ctx, r](ApiRequest& req) -> net::awaitable<ApiResponse> {
    auto limit = QueryInt(req, "limit", 200, 1, 1000);
    if (!limit.ok()) co_return ApiResponse::Error(limit.status());
    co_return co_await OnLifecycle(ctx, [&](Lifecycle& l) {
      auto tasks = ctx.store.ListTasks(r.kind, 1000);
      if (!tasks.ok()) return ApiResponse::Error(tasks.status());
      const auto reasons = WaitingReasons(l);
      nlohmann::json list = nlohmann::json::array();
      for (const auto& t : *tasks) {
        if (!req.principal->Manages(t.owner)) continue;
        if (static_cast<int64_t>(list.size()) >= *limit) break;
        list.push_back(TaskJson(ctx, t, LatestAllocation(ctx.store, t.id), reasons));
      }
      const auto total = list.size();
      return ApiResponse::Json({{r.noun + "s", std::move(list)}, {"total", total}});
    });
  });
  router.Add("GET", base + "/{id}", Access::kUser, [&ctx, r](ApiRequest& req) -> net::awaitable<ApiResponse> {
    auto task = Visible(ctx, req, r, req.params[0], "read");
    if (!task.ok()) co_return ApiResponse::Error(task.status());
    co_return co_await OnLifecycle(ctx, [&](Lifecycle& l) {
      return ApiResponse::Json(
          TaskJson(ctx, *task, LatestAllocation(ctx.store, task->id), WaitingReasons(l)));
    });
  });
  router.Add("POST", base + "/{id}/kill", Access::kUser,
             [&ctx, r](ApiRequest& req) -> net::awaitable<ApiResponse> {
               auto task = Visible(ctx, req, r, req.params[0], "kill");
               if (!task.ok()) co_return ApiResponse::Error(task.status());
               co_return co_await OnLifecycle(ctx, [&](Lifecycle& l) {
                 if (Status s = l.tasks().Kill(task->id); !s.ok()) return ApiResponse::Error(s);
                 auto fresh = ctx.store.GetTask(task->id);
                 return ApiResponse::Json(
                     TaskJson(ctx, fresh.ok() ? *fresh : *task, LatestAllocation(ctx.store, task->id), {}));
               });
             });
  router.Add("GET", base + "/{id}/logs", Access::kUser,
             [&ctx, r](ApiRequest& req) { return Logs(ctx, req, r); });
}

}  // namespace ring
