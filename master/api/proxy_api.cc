// The task proxy's routes on the main API: a signed-in owner or admin asks
// for a one-time link to a task's service; a task's process announces the
// port its server listens on (its allocation's token). The proxy itself is
// served on its own origin (master/proxy/).
#include <utility>  // before Asio

#include "master/api/routes.h"
#include "master/lifecycle/lifecycle.h"
#include "master/proxy/proxy_access.h"
#include "master/proxy/task_proxy.h"
#include "master/rm/routing_rm.h"
#include "master/store/store.h"

namespace ring {
namespace {

constexpr size_t kMaxServiceName = 64;
constexpr size_t kMaxServiceToken = 256;

ApiResponse NoProxy() {
  return ApiResponse::Error(Unavailable("this master runs no task proxy"));
}

ApiResponse Link(ApiContext& ctx, ApiRequest& req) {
  if (!ctx.proxy) return NoProxy();
  auto task = ParseId(req.params[0], "task id");
  if (!task.ok()) return ApiResponse::Error(task.status());
  if (Status s = CheckProxyAccess(ctx.store, req.principal->username, *task); !s.ok())
    return ApiResponse::Error(s);
  auto ticket =
      ctx.proxy->tickets().Issue({*task, req.principal->username}, std::chrono::steady_clock::now());
  if (!ticket.ok()) return ApiResponse::Error(ticket.status());
  nlohmann::json out = {{"task_id", *task},
                        {"url", ctx.proxy->TicketUrl(*ticket)},
                        {"proxy_url", ctx.proxy->TaskUrl(*task)},
                        {"expires_in_seconds", ctx.proxy->tickets().options().ticket_ttl.count()}};
  // When the task's proxied traffic last moved (null: not since the master started).
  if (auto last = ctx.proxy->activity().Last(*task))
    out["last_activity"] = FormatRfc3339(*last);
  else
    out["last_activity"] = nullptr;
  if (auto service = ctx.proxy->services().Lookup(*task)) {
    out["service"] = {{"port", service->port}, {"name", service->name}};
  } else {
    out["service"] = nullptr;
  }
  return ApiResponse::Json(out);
}

ApiResponse Announce(ApiContext& ctx, ApiRequest& req) {
  auto holder = ctx.lifecycle.tokens().Authorize(req.params[0], req.BearerToken());
  if (!holder.ok()) return ApiResponse::Error(holder.status());
  if (!ctx.proxy) return NoProxy();
  auto body = ParseJsonBody(req);
  if (!body.ok()) return ApiResponse::Error(body.status());
  const auto port = body->find("port");
  if (port == body->end() || !port->is_number_integer() || port->get<int64_t>() < 1 ||
      port->get<int64_t>() > 65535)
    return ApiResponse::Error(InvalidArgument("port must be an integer from 1 to 65535"));
  std::string name;
  if (auto n = body->find("name"); n != body->end() && !n->is_null()) {
    if (!n->is_string()) return ApiResponse::Error(InvalidArgument("name must be a string"));
    name = n->get<std::string>();
    if (name.size() > kMaxServiceName)
      return ApiResponse::Error(InvalidArgument("name must be at most 64 characters"));
    for (char c : name)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
        return ApiResponse::Error(InvalidArgument("name must not hold control characters"));
  }
  std::string token;
  if (auto t = body->find("token"); t != body->end() && !t->is_null()) {
    if (!t->is_string()) return ApiResponse::Error(InvalidArgument("token must be a string"));
    token = t->get<std::string>();
    if (token.size() > kMaxServiceToken)
      return ApiResponse::Error(InvalidArgument("token must be at most 256 characters"));
    for (char c : token)
      if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f)
        return ApiResponse::Error(InvalidArgument("token must not hold spaces or control characters"));
  }
  auto alloc = ctx.store.GetAllocation(req.params[0]);
  if (!alloc.ok()) return ApiResponse::Error(alloc.status());
  if (alloc->placements.empty())
    return ApiResponse::Error(Conflict("allocation " + alloc->id + " is not placed on a node yet"));
  auto task = ctx.store.GetTask(alloc->task_id);
  if (!task.ok()) return ApiResponse::Error(task.status());
  // The host is where the master placed rank 0, never what the task says:
  // the proxy connects to the task's own node only.
  // On a Slurm pool that node runs no agent of ours: its address is the
  // one the allocation's job agent there said hello from.
  const std::string& agent_id = alloc->placements.front().agent_id;
  std::string host;
  if (ctx.routing)
    if (auto job_agent = ctx.routing->JobAgentOn(alloc->id, agent_id)) host = job_agent->address;
  if (host.empty()) {
    auto agents = ctx.store.ListAgents();
    if (!agents.ok()) return ApiResponse::Error(agents.status());
    for (const auto& a : *agents)
      if (a.id == agent_id) host = a.address;
  }
  if (host.empty())
    return ApiResponse::Error(Conflict("the address of agent " + agent_id + ", where allocation " +
                                       alloc->id + " runs, is not known"));
  AnnouncedService service{
      task->id, alloc->id, task->owner, host, static_cast<uint16_t>(port->get<int64_t>()), name, token};
  ctx.proxy->services().Announce(service);
  return ApiResponse::Json({{"task_id", task->id}, {"proxy_url", ctx.proxy->TaskUrl(task->id)}});
}

}  // namespace

void RegisterProxyRoutes(Router& router, ApiContext& ctx) {
  router.AddSync("POST", "/api/v1/tasks/{id}/proxy/link", Access::kUser,
                 [&ctx](ApiRequest& req) { return Link(ctx, req); });
  router.AddSync("POST", "/api/v1/allocations/{id}/proxy", Access::kAllocation,
                 [&ctx](ApiRequest& req) { return Announce(ctx, req); });
}

}  // namespace ring
