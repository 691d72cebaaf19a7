#include <charconv>

#include <utility>  // before Asio

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "master/api/routes.h"
#include "master/api/work_gate.h"
#include "master/http/stream_slots.h"
#include "master/lifecycle/lifecycle.h"
#include "master/lifecycle/read_access.h"
#include "master/store/store.h"

namespace ring {
namespace {

bool ParseInt(const std::string& text, int64_t& out) {
  if (text.empty()) return false;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

}  // namespace

Result<int64_t> ParseId(const std::string& text, const std::string& what) {
  int64_t id = 0;
  if (!ParseInt(text, id) || id <= 0)
    return InvalidArgument(what + " must be a positive integer, got \"" + text.substr(0, 64) + "\"");
  return id;
}

Result<int64_t> QueryInt(const ApiRequest& req, const std::string& name, int64_t fallback, int64_t min,
                         int64_t max) {
  auto it = req.query.find(name);
  if (it == req.query.end() || it->second.empty()) return fallback;
  int64_t v = 0;
  if (!ParseInt(it->second, v) || v < min || v > max)
    return InvalidArgument("query parameter " + name + " must be an integer from " + std::to_string(min) +
                           " to " + std::to_string(max) + ", got \"" + it->second.substr(0, 64) + "\"");
  return v;
}

Result<nlohmann::json> ParseJsonBody(const ApiRequest& req) {
  auto j = nlohmann::json::parse(req.body, nullptr, false);
  if (j.is_discarded()) return InvalidArgument("the request body is not valid JSON");
  if (!j.is_object()) return InvalidArgument("the request body must be a JSON object");
  return j;
}

}  // namespace ring

namespace ring {

boost::asio::awaitable<ApiResponse> OffNetworkThread(boost::asio::thread_pool* pool,
                                                     std::function<ApiResponse()> work) {
  if (pool == nullptr) co_return work();
  co_return co_await boost::asio::co_spawn(
      pool->get_executor(), [&work]() -> boost::asio::awaitable<ApiResponse> { co_return work(); },
      boost::asio::use_awaitable);
}

boost::asio::awaitable<ApiResponse> OffNetworkThread(ApiContext& ctx, std::function<ApiResponse()> work) {
  return OffNetworkThread(ctx.slow_work, std::move(work));
}

boost::asio::awaitable<ApiResponse> HashOffNetworkThread(ApiContext& ctx, std::function<ApiResponse()> work) {
  std::unique_ptr<WorkGate::Ticket> ticket;
  if (ctx.slow_work_gate != nullptr) {
    ticket = ctx.slow_work_gate->Enter();
    if (!ticket) {
      const int64_t wait = ctx.slow_work_gate->RetryAfterSeconds();
      auto busy = ApiResponse::Error(
          {ErrorCode::kTooManyRequests,
           "the master is busy checking passwords (" + std::to_string(ctx.slow_work_gate->limit()) +
               " queued, max_queued_sign_ins); try again in " + std::to_string(wait) + " s"});
      busy.headers.emplace_back("Retry-After", std::to_string(wait));
      co_return busy;
    }
  }
  co_return co_await OffNetworkThread(ctx.slow_work, std::move(work));
}

boost::asio::awaitable<ApiResponse> OnLifecycle(ApiContext& ctx,
                                                std::function<ApiResponse(Lifecycle&)> work) {
  return OffNetworkThread(ctx.lifecycle_thread,
                          [&ctx, work = std::move(work)] { return ctx.lifecycle.Run(work); });
}

void UseAllocationTokens(Router& router, ApiContext& ctx) {
  router.SetAllocationAuthorizer([&ctx](const std::string& allocation_id, const std::string& token) {
    auto holder = ctx.lifecycle.tokens().Authorize(allocation_id, token);
    return holder.ok() ? Status::Ok() : holder.status();
  });
}

void RegisterAllRoutes(Router& router, ApiContext& ctx) {
  RegisterAuthRoutes(router, ctx);
  RegisterMetaRoutes(router, ctx);
  RegisterClusterRoutes(router, ctx);
  RegisterWorkspaceRoutes(router, ctx);
  RegisterProjectRoutes(router, ctx);
  RegisterExperimentRoutes(router, ctx);
  RegisterTrialRoutes(router, ctx);
  RegisterAllocationRoutes(router, ctx);
  RegisterCheckpointRoutes(router, ctx);
  RegisterSearcherRoutes(router, ctx);
  RegisterRendezvousRoutes(router, ctx);
  RegisterMetricRoutes(router, ctx);
  RegisterPoolRoutes(router, ctx);
  RegisterTaskRoutes(router, ctx, TaskKind::kCommand, "commands");
  RegisterTaskRoutes(router, ctx, TaskKind::kShell, "shells");
  RegisterShellTerminalRoutes(router, ctx);
  RegisterTaskRoutes(router, ctx, TaskKind::kNotebook, "notebooks");
  RegisterTemplateRoutes(router, ctx);
  RegisterWebhookRoutes(router, ctx);
  RegisterModelRoutes(router, ctx);
  RegisterAgentIdentityRoutes(router, ctx);
  RegisterProxyRoutes(router, ctx);
}

Status CheckManages(ApiContext& ctx, const ApiRequest& req, int64_t experiment_id, const std::string& verb) {
  auto exp = ctx.store.GetExperiment(experiment_id);
  if (!exp.ok()) return exp.status();
  if (!req.principal) return {ErrorCode::kUnauthenticated, "sign in first"};
  if (req.principal->Manages(exp->owner)) return Status::Ok();
  return {ErrorCode::kPermissionDenied, "experiment " + std::to_string(experiment_id) + " belongs to " +
                                            exp->owner + "; only its owner or an admin may " + verb + " it"};
}

Reader ReaderOf(const ApiContext& ctx, const ApiRequest& req) {
  Reader who;
  if (req.principal) {
    who.username = req.principal->username;
    who.admin = req.principal->admin();
  }
  who.team_readable = ctx.experiments_team_readable;
  return who;
}

Status CheckReads(ApiContext& ctx, const ApiRequest& req, const ExperimentRecord& exp,
                  const std::string& what) {
  if (!req.principal) return {ErrorCode::kUnauthenticated, "sign in first"};
  auto readable = MayReadExperiment(ctx.store, exp, ReaderOf(ctx, req));
  if (!readable.ok()) return readable.status();
  if (*readable) return Status::Ok();
  return {ErrorCode::kPermissionDenied,
          "experiment " + std::to_string(exp.id) + " belongs to " + exp.owner +
              "; only its owner, an admin or a member of its workspace may read its " + what +
              " (this master has experiments_team_readable: false)"};
}

Status CheckReads(ApiContext& ctx, const ApiRequest& req, int64_t experiment_id, const std::string& what) {
  auto exp = ctx.store.GetExperiment(experiment_id);
  if (!exp.ok()) return exp.status();
  return CheckReads(ctx, req, *exp, what);
}

Status CheckTrialReads(ApiContext& ctx, const ApiRequest& req, int64_t trial_id, const std::string& what) {
  auto trial = ctx.store.GetTrial(trial_id);
  if (!trial.ok()) return trial.status();
  return CheckReads(ctx, req, trial->experiment_id, what);
}

Status CheckDownloads(ApiContext& ctx, const ApiRequest& req, int64_t experiment_id,
                      const std::string& what) {
  return CheckReads(ctx, req, experiment_id, what);
}

Result<std::shared_ptr<void>> TakeStreamSlot(ApiContext& ctx) {
  if (ctx.streams == nullptr) return std::shared_ptr<void>();
  auto slot = ctx.streams->TryTake();
  if (!slot)
    return Unavailable("the master is sending " + std::to_string(ctx.streams->max()) +
                       " large answers already (max_streamed_answers in master.yaml); try again shortly");
  return slot;
}

}  // namespace ring
