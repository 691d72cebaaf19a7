// Agent identity routes: enrolment with the cluster token, `ring agent
// remove`, `ring agent allow-slots` and `ring master rotate-cluster-token`.
#include "common/json_fields.h"
#include "master/api/routes.h"
#include "master/lifecycle/lifecycle.h"
#include "master/rm/agentrm/agent_enrolments.h"
#include "master/rm/agentrm/agent_rm.h"

namespace ring {
namespace {

ApiResponse NoEnrolments() {
  return ApiResponse::Error(Unavailable("this master does not enrol agents"));
}

ApiResponse AllowSlots(ApiContext& ctx, ApiRequest& req) {
  if (!ctx.enrolments) return NoEnrolments();
  auto body = ParseJsonBody(req);
  if (!body.ok()) return ApiResponse::Error(body.status());
  if (Status s = CheckKnownFields(*body, {"slots"}, "the request body"); !s.ok())
    return ApiResponse::Error(s);
  if (!body->is_object() || !body->contains("slots") || !(*body)["slots"].is_number_integer())
    return ApiResponse::Error(
        InvalidArgument("slots must be an integer from 0 to " + std::to_string(kMaxEnrolledSlots)));
  const auto slots = (*body)["slots"].is_number_unsigned() &&
                             (*body)["slots"].get<uint64_t>() > static_cast<uint64_t>(kMaxEnrolledSlots)
                         ? kMaxEnrolledSlots + 1
                         : (*body)["slots"].get<int64_t>();
  if (Status s = ctx.enrolments->AllowSlots(req.params[0], slots); !s.ok()) return ApiResponse::Error(s);
  return ApiResponse::Json({{"id", req.params[0]}, {"enrolled_slots", slots}});
}

}  // namespace

void RegisterAgentIdentityRoutes(Router& router, ApiContext& ctx) {
  // Public for the router: the cluster token is not a user's; Enrol checks
  // it before it reads the body.
  // The store is written on the lifecycle's thread, never on a network one.
  router.Add("POST", "/api/v1/agents/enrol", Access::kPublic, [&ctx](ApiRequest& req) {
    return OnLifecycle(ctx, [&ctx, &req](Lifecycle&) {
      if (!ctx.enrolments) return NoEnrolments();
      auto issued = ctx.enrolments->Enrol(req.Header("authorization"), req.body, req.peer);
      if (!issued.ok()) return ApiResponse::Error(issued.status());
      auto res = ApiResponse::Json({{"agent_id", issued->agent_id},
                                    {"credential", issued->credential},
                                    {"pool", issued->pool},
                                    {"slots", issued->slots},
                                    {"enrolled_at", issued->enrolled_at}});
      res.status = 201;
      res.headers.emplace_back("Cache-Control", "no-store");
      return res;
    });
  });
  // `ring agent remove ID`: the credential stops working at once, the
  // connection is closed and its work ends; the id may enrol again.
  router.Add("DELETE", "/api/v1/agents/{id}", Access::kAdmin, [&ctx](ApiRequest& req) {
    return OnLifecycle(ctx, [&ctx, &req](Lifecycle&) {
      if (!ctx.enrolments) return NoEnrolments();
      const std::string& id = req.params[0];
      const Status revoked = ctx.enrolments->Revoke(id);
      const Status removed = ctx.agents.Remove(id);
      if (!revoked.ok() && !removed.ok())
        return ApiResponse::Error(NotFound("agent " + id + " is not known"));
      if (!revoked.ok() && revoked.code() != ErrorCode::kNotFound) return ApiResponse::Error(revoked);
      return ApiResponse::Json({{"id", id}, {"removed", true}});
    });
  });
  // `ring agent allow-slots ID N`: its hellos may offer up to N slots.
  router.Add("POST", "/api/v1/agents/{id}/slots", Access::kAdmin, [&ctx](ApiRequest& req) {
    return OnLifecycle(ctx, [&ctx, &req](Lifecycle&) { return AllowSlots(ctx, req); });
  });
  // `ring master rotate-cluster-token`: enrolled agents stay connected.
  router.AddSync("POST", "/api/v1/master/cluster-token/rotate", Access::kAdmin, [&ctx](ApiRequest&) {
    if (!ctx.enrolments) return NoEnrolments();
    auto token = ctx.enrolments->RotateClusterToken();
    if (!token.ok()) return ApiResponse::Error(token.status());
    auto res = ApiResponse::Json(
        {{"cluster_token_file", ctx.enrolments->cluster_token_file()}, {"cluster_token", *token}});
    res.headers.emplace_back("Cache-Control", "no-store");
    return res;
  });
}

}  // namespace ring
