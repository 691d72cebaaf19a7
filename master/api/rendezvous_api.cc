// The rendezvous key-value store of an allocation, as its ranks see it: set a
// key (raw bytes), read one (waiting up to timeout_ms for it to be set), or
// check which of several are set. A waiting read holds no thread: it sleeps
// on a timer of its connection's strand, which the store's wake callback
// expires as soon as the key is set or the allocation ends.
#include <utility>  // before Asio

#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "master/api/routes.h"
#include "master/lifecycle/lifecycle.h"

namespace ring {
namespace {

namespace net = boost::asio;

constexpr int64_t kMaxWaitMs = 60000;

Result<std::string> KeyParam(const ApiRequest& req) {
  auto it = req.query.find("key");
  if (it == req.query.end()) return InvalidArgument("query parameter key (the rendezvous key) is required");
  return it->second;
}

std::vector<std::string> SplitKeys(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    const size_t comma = text.find(',', start);
    out.push_back(text.substr(start, comma - start));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

// The allocation's token is checked on every call, as the router did on the
// way in: an allocation that ended meanwhile gets 409.
Status Authorized(ApiContext& ctx, const std::string& allocation_id, const std::string& token) {
  auto holder = ctx.lifecycle.tokens().Authorize(allocation_id, token);
  return holder.ok() ? Status::Ok() : holder.status();
}

ApiResponse Check(ApiContext& ctx, const ApiRequest& req) {
  auto it = req.query.find("keys");
  if (it == req.query.end())
    return ApiResponse::Error(InvalidArgument(
        "query parameter key (read one key) or keys (check several, comma-separated) is required"));
  const auto keys = SplitKeys(it->second);
  if (keys.size() > 10000) return ApiResponse::Error(InvalidArgument("keys names over 10000 keys"));
  if (Status s = Authorized(ctx, req.params[0], req.BearerToken()); !s.ok()) return ApiResponse::Error(s);
  auto check = ctx.lifecycle.rendezvous().CheckKeys(req.params[0], keys);
  if (!check.ok()) return ApiResponse::Error(check.status());
  return ApiResponse::Json({{"set", check->set}, {"missing", check->missing}});
}

net::awaitable<ApiResponse> Get(ApiContext& ctx, ApiRequest& req) {
  if (!req.query.count("key")) co_return Check(ctx, req);
  auto key = KeyParam(req);
  if (!key.ok()) co_return ApiResponse::Error(key.status());
  auto timeout = QueryInt(req, "timeout_ms", 0, 0, kMaxWaitMs);
  if (!timeout.ok()) co_return ApiResponse::Error(timeout.status());
  const std::string& allocation_id = req.params[0];
  const std::string token = req.BearerToken();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(*timeout);
  // Shared with the wake callback, which may outlive this read by one post.
  auto timer = std::make_shared<net::steady_timer>(co_await net::this_coro::executor);
  for (;;) {
    RendezvousStore::Waker wake;
    if (std::chrono::steady_clock::now() < deadline)
      wake = [timer] {
        // Runs on the thread that set the key: the timer is touched only on its strand.
        net::post(timer->get_executor(),
                  [timer] { timer->expires_at(std::chrono::steady_clock::time_point::min()); });
      };
    if (Status s = Authorized(ctx, allocation_id, token); !s.ok()) co_return ApiResponse::Error(s);
    auto got = ctx.lifecycle.rendezvous().Get(allocation_id, *key, std::move(wake));
    if (!got.ok()) co_return ApiResponse::Error(got.status());
    if (got->value) {
      ApiResponse r;
      r.content_type = "application/octet-stream";
      r.body = *got->value;
      co_return r;
    }
    if (!got->wait) {
      if (*timeout > 0)
        spdlog::debug("[rendezvous] allocation {}: key {} still not set after {} ms", allocation_id, *key,
                      *timeout);
      co_return ApiResponse::Error(NotFound("rendezvous key " + *key + " is not set"));
    }
    timer->expires_at(deadline);
    boost::system::error_code ec;  // operation_aborted when woken: look again either way
    co_await timer->async_wait(net::redirect_error(net::use_awaitable, ec));
    ctx.lifecycle.rendezvous().CancelWait(allocation_id, got->wait);
  }
}

ApiResponse Put(ApiContext& ctx, ApiRequest& req) {
  auto key = KeyParam(req);
  if (!key.ok()) return ApiResponse::Error(key.status());
  if (Status s = Authorized(ctx, req.params[0], req.BearerToken()); !s.ok()) return ApiResponse::Error(s);
  // An allocation that ends meanwhile is closed in the store: the call gets 409.
  Status s = ctx.lifecycle.rendezvous().Set(req.params[0], *key, std::move(req.body));
  if (!s.ok()) return ApiResponse::Error(s);
  ApiResponse r;
  r.status = 204;
  r.content_type = "application/octet-stream";
  return r;
}

}  // namespace

void RegisterRendezvousRoutes(Router& router, ApiContext& ctx) {
  UseAllocationTokens(router, ctx);
  router.Add("GET", "/api/v1/allocations/{id}/rendezvous", Access::kAllocation,
             [&ctx](ApiRequest& r) { return Get(ctx, r); });
  router.AddSync("PUT", "/api/v1/allocations/{id}/rendezvous", Access::kAllocation,
                 [&ctx](ApiRequest& r) { return Put(ctx, r); });
}

}  // namespace ring
