#include <cstdint>
#include <functional>
#include <map>
#include <memory>

#include "common/json_fields.h"
#include "master/api/agents_list.h"
#include "master/api/json_views.h"
#include "master/api/routes.h"
#include "master/http/content_encoding.h"
#include "master/lifecycle/lifecycle.h"
#include "master/lifecycle/read_access.h"
#include "master/rm/agentrm/agent_rm.h"
#include "master/rm/routing_rm.h"
#include "master/rm/slurmrm/slurm_state.h"

namespace ring {
namespace {

// Where experiments are not team-readable, a job the caller may not read
// (another user's task, a trial of an experiment they may not read) keeps
// its place, slots and reason in the queue but not whose it is or which
// experiment: `owner` empty, `experiment_id` and `trial_id` null,
// `"private": true` (as Slurm's PrivateData=jobs, without hiding the queue).
void HideUnreadableJobs(ApiContext& ctx, const ApiRequest& req, nlohmann::json& jobs) {
  if (ctx.experiments_team_readable || !req.principal || req.principal->admin()) return;
  const Reader who = ReaderOf(ctx, req);
  std::map<int64_t, bool> readable;  // by experiment id
  for (auto& j : jobs) {
    bool shown = j["owner"] == who.username;
    if (!shown && j["experiment_id"].is_number_integer()) {
      const int64_t id = j["experiment_id"].get<int64_t>();
      auto [at, added] = readable.try_emplace(id, false);
      if (added) {
        auto exp = ctx.store.GetExperiment(id);
        auto may = exp.ok() ? MayReadExperiment(ctx.store, *exp, who) : Result<bool>(false);
        at->second = may.ok() && *may;
      }
      shown = at->second;
    }
    if (shown) continue;
    j["owner"] = "";
    j["experiment_id"] = nullptr;
    j["trial_id"] = nullptr;
    j["private"] = true;
  }
}

// GET /api/v1/agents: `limit` (1-1000; none: every agent) and `offset`.
boost::asio::awaitable<ApiResponse> ListAgents(ApiContext& ctx, ApiRequest& req,
                                               std::shared_ptr<AgentsList> list) {
  AgentsList::Page page;
  if (req.query.count("limit")) {
    auto limit = QueryInt(req, "limit", 100, 1, 1000);
    if (!limit.ok()) co_return ApiResponse::Error(limit.status());
    page.limit = *limit;
  }
  auto offset = QueryInt(req, "offset", 0, 0, INT32_MAX);
  if (!offset.ok()) co_return ApiResponse::Error(offset.status());
  page.offset = *offset;
  const bool gzip = AcceptsGzip(req.Header("accept-encoding"));
  const uint64_t ticket = list->Arrive();
  // Named, not a temporary in the co_await expression: built with GCC 12,
  // such a temporary was released before the work ran, and with it the
  // reference to the list that it holds.
  std::function<ApiResponse()> answer = [list, ticket, page, gzip] {
    return list->Answer(ticket, page, gzip);
  };
  co_return co_await OffNetworkThread(ctx.list_work, std::move(answer));
}

}  // namespace

void RegisterClusterRoutes(Router& router, ApiContext& ctx) {
  router.AddSync("GET", "/api/v1/health", Access::kPublic, [&ctx](ApiRequest&) {
    return ApiResponse::Json({{"status", "ok"}, {"version", ctx.version}});
  });
  // Built off the network threads (ctx.list_work), shared by the requests
  // that wait for one build; without `limit`, every agent (the web UI and
  // `ring agent list` read it whole).
  auto list = std::make_shared<AgentsList>(
      [&ctx] { return ctx.routing ? ctx.routing->AgentsJson() : ctx.agents.AgentsJson(); });
  router.Add("GET", "/api/v1/agents", Access::kUser,
             [&ctx, list](ApiRequest& req) { return ListAgents(ctx, req, list); });
  router.Add("GET", "/api/v1/jobs", Access::kUser, [&ctx](ApiRequest& req) {
    return OnLifecycle(ctx, [&ctx, &req](Lifecycle& l) {
      auto jobs = JobsJson(l.scheduling().Jobs());
      HideUnreadableJobs(ctx, req, jobs);
      // On a Slurm pool: the allocation's Slurm job, and why Slurm keeps it pending.
      if (ctx.routing)
        for (auto& j : jobs)
          if (auto slurm = ctx.routing->SlurmJob(j["allocation_id"].get<std::string>());
              slurm && slurm->job_id) {
            j["slurm_job_id"] = slurm->job_id;
            j["slurm_state"] = slurm->state;
            if (slurm->state == "PENDING" && !slurm->reason.empty()) {
              j["slurm_pending_reason"] = DescribePendingReason(slurm->reason);
              j["why_waiting"] = "in Slurm: " + j["slurm_pending_reason"].get<std::string>();
            }
          }
      const auto total = jobs.size();
      return ApiResponse::Json({{"jobs", std::move(jobs)}, {"total", total}});
    });
  });
  // What the master issued one allocation's Slurm job, for the submit
  // helper: public for the router, answered only to the allocation's own
  // credential (Authorization: Bearer), and the same 401 for an unknown
  // allocation or a wrong credential.
  router.AddSync("GET", "/api/v1/slurm/grants/{allocation_id}", Access::kPublic, [&ctx](ApiRequest& req) {
    constexpr std::string_view kBearer = "Bearer ";
    const std::string authorization = req.Header("authorization");
    std::optional<SlurmGrantView> grant;
    if (ctx.routing && authorization.rfind(kBearer, 0) == 0)
      for (const auto& slurm : ctx.routing->slurm())
        if (auto g = slurm->GrantFor(req.params[0], std::string_view(authorization).substr(kBearer.size())))
          grant = std::move(g);
    if (!grant)
      return ApiResponse::Error(
          Status(ErrorCode::kUnauthenticated,
                 "no live Slurm allocation " + req.params[0] + " with this credential"));
    nlohmann::json body = {
        {"allocation_id", grant->allocation_id}, {"pool", grant->pool}, {"nodes", grant->nodes}};
    if (grant->run_as) {
      body["uid"] = grant->run_as->uid;
      body["gid"] = grant->run_as->gid;
      body["user"] = grant->run_as->user;
    }
    auto res = ApiResponse::Json(std::move(body));
    res.headers.emplace_back("Cache-Control", "no-store");
    return res;
  });
  // {"drain": true}: running work finishes; otherwise it is preempted.
  router.Add("POST", "/api/v1/agents/{id}/disable", Access::kAdmin,
             [&ctx](ApiRequest& req) -> boost::asio::awaitable<ApiResponse> {
               bool drain = false;
               if (!req.body.empty()) {
                 auto body = ParseJsonBody(req);
                 if (!body.ok()) co_return ApiResponse::Error(body.status());
                 if (!body->is_object() || (body->contains("drain") && !(*body)["drain"].is_boolean()))
                   co_return ApiResponse::Error(InvalidArgument("body must be {\"drain\": true|false}"));
                 if (Status s = CheckKnownFields(*body, {"drain"}, "the request body"); !s.ok())
                   co_return ApiResponse::Error(s);
                 drain = body->value("drain", false);
               }
               co_return co_await OnLifecycle(ctx, [&](Lifecycle&) {
                 if (Status s = ctx.agents.Disable(req.params[0], drain); !s.ok())
                   return ApiResponse::Error(s);
                 return ApiResponse::Json({{"id", req.params[0]}, {"enabled", false}, {"draining", drain}});
               });
             });
  router.Add("POST", "/api/v1/agents/{id}/enable", Access::kAdmin, [&ctx](ApiRequest& req) {
    return OnLifecycle(ctx, [&ctx, &req](Lifecycle&) {
      if (Status s = ctx.agents.Enable(req.params[0]); !s.ok()) return ApiResponse::Error(s);
      return ApiResponse::Json({{"id", req.params[0]}, {"enabled", true}, {"draining", false}});
    });
  });
}

}  // namespace ring
