// Searcher operations, as trial processes see them: the next operation (a
// long poll for ranks waiting on the chief's completion), its completion with
// the searcher metric, and a report of invalid hyperparameters.
#include <utility>  // before Asio

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "master/api/routes.h"
#include "master/core/experiment_controller.h"

namespace ring {
namespace {

namespace net = boost::asio;

// Answers at once, unless `after` names an operation whose completion has not
// arrived: then polls until it does or timeout_s passes.
net::awaitable<ApiResponse> Operation(ApiContext& ctx, ApiRequest& req) {
  auto timeout = QueryInt(req, "timeout_s", 30, 0, 60);
  if (!timeout.ok()) co_return ApiResponse::Error(timeout.status());
  std::optional<int64_t> after;
  if (req.query.count("after")) {
    auto value = QueryInt(req, "after", 0, 0, INT64_MAX);
    if (!value.ok()) co_return ApiResponse::Error(value.status());
    after = *value;
  }
  net::steady_timer timer(co_await net::this_coro::executor);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(*timeout);
  for (;;) {
    auto op = ctx.controller.SearcherOperation(req.params[0], req.BearerToken(), after);
    if (!op.ok()) co_return ApiResponse::Error(op.status());
    const bool pending = (*op)["operation"].is_null() && !(*op)["done"].get<bool>();
    if (!pending || std::chrono::steady_clock::now() >= give_up) co_return ApiResponse::Json(*op);
    timer.expires_after(std::chrono::milliseconds(100));
    co_await timer.async_wait(net::use_awaitable);
  }
}

}  // namespace

void RegisterSearcherRoutes(Router& router, ApiContext& ctx) {
  UseAllocationTokens(router, ctx);
  router.Add("GET", "/api/v1/allocations/{id}/searcher/operation", Access::kAllocation,
             [&ctx](ApiRequest& r) { return Operation(ctx, r); });
  router.AddSync(
      "POST", "/api/v1/allocations/{id}/searcher/completed", Access::kAllocation, [&ctx](ApiRequest& req) {
        auto body = ParseJsonBody(req);
        if (!body.ok()) return ApiResponse::Error(body.status());
        auto accepted = ctx.controller.CompleteSearcherOperation(req.params[0], req.BearerToken(), *body);
        if (!accepted.ok()) return ApiResponse::Error(accepted.status());
        return ApiResponse::Json({{"accepted", *accepted}});
      });
  router.AddSync("POST", "/api/v1/allocations/{id}/searcher/invalid_hparams", Access::kAllocation,
                 [&ctx](ApiRequest& req) {
                   auto body = ParseJsonBody(req);
                   if (!body.ok()) return ApiResponse::Error(body.status());
                   Status s = ctx.controller.ReportInvalidHparams(req.params[0], req.BearerToken(), *body);
                   if (!s.ok()) return ApiResponse::Error(s);
                   return ApiResponse::Json({{"recorded", true}});
                 });
}

}  // namespace ring
