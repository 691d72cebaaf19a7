// Searcher operations, as trial processes see them: the next operation (a
// long poll for ranks waiting on the chief's completion), its completion with
// the searcher metric, and a report of invalid hyperparameters.
#include <utility>  // before Asio

#include <spdlog/spdlog.h>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "master/api/commands.h"
#include "master/api/routes.h"
#include "master/lifecycle/lifecycle.h"

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
    OperationAnswer op;
    ApiResponse answer = co_await OnLifecycle(ctx, [&](Lifecycle& l) {
      auto alloc = l.allocations().Live(req.params[0]);
      if (!alloc.ok()) return ApiResponse::Error(alloc.status());
      auto next = l.searches().Operation(**alloc, after);
      if (!next.ok()) return ApiResponse::Error(next.status());
      op = *next;
      return ApiResponse::Json(
          {{"operation", op.length ? nlohmann::json{{"length", *op.length}} : nlohmann::json()},
           {"done", op.done}});
    });
    const bool pending = answer.status == 200 && !op.length && !op.done;
    if (!pending || std::chrono::steady_clock::now() >= give_up) co_return answer;
    timer.expires_after(std::chrono::milliseconds(100));
    co_await timer.async_wait(net::use_awaitable);
  }
}

}  // namespace

void RegisterSearcherRoutes(Router& router, ApiContext& ctx) {
  UseAllocationTokens(router, ctx);
  router.Add("GET", "/api/v1/allocations/{id}/searcher/operation", Access::kAllocation,
             [&ctx](ApiRequest& r) { return Operation(ctx, r); });
  router.Add("POST", "/api/v1/allocations/{id}/searcher/completed", Access::kAllocation,
             [&ctx](ApiRequest& req) -> net::awaitable<ApiResponse> {
               auto body = ParseJsonBody(req);
               if (!body.ok()) co_return ApiResponse::Error(body.status());
               auto done = DecodeCompletion(*body);
               if (!done.ok()) co_return ApiResponse::Error(done.status());
               co_return co_await OnLifecycle(ctx, [&](Lifecycle& l) {
                 auto alloc = l.allocations().Live(req.params[0]);
                 if (!alloc.ok()) return ApiResponse::Error(alloc.status());
                 return ApiResponse::Json({{"accepted", l.searches().Complete(**alloc, *done)}});
               });
             });
  router.Add("POST", "/api/v1/allocations/{id}/searcher/invalid_hparams", Access::kAllocation,
             [&ctx](ApiRequest& req) -> net::awaitable<ApiResponse> {
               auto body = ParseJsonBody(req);
               if (!body.ok()) co_return ApiResponse::Error(body.status());
               auto message = DecodeInvalidHparams(*body);
               if (!message.ok()) co_return ApiResponse::Error(message.status());
               co_return co_await OnLifecycle(ctx, [&](Lifecycle& l) {
                 auto alloc = l.allocations().Live(req.params[0]);
                 if (!alloc.ok()) return ApiResponse::Error(alloc.status());
                 (*alloc)->invalid_hparams = *message;
                 spdlog::warn("[searcher] trial {} reports invalid hyperparameters: {}", (*alloc)->trial_id(),
                              *message);
                 return ApiResponse::Json({{"recorded", true}});
               });
             });
}

}  // namespace ring
