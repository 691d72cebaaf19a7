#include "master/http/router.h"

#include <chrono>

namespace ring {

std::vector<std::string> SplitPath(const std::string& path) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < path.size()) {
    while (i < path.size() && path[i] == '/') ++i;
    size_t j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    if (j > i) out.push_back(path.substr(i, j - i));
    i = j;
  }
  return out;
}

const char* MethodLabel(const std::string& method) {
  static const char* const kKnown[] = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"};
  for (const char* known : kKnown)
    if (method == known) return known;
  return "other";
}

const char* AccessName(Access access) {
  switch (access) {
    case Access::kPublic:
      return "public";
    case Access::kUser:
      return "user";
    case Access::kAdmin:
      return "admin";
    case Access::kAllocation:
      return "allocation";
  }
  return "?";
}

void Router::Add(std::string method, std::string pattern, Access access, ApiHandler handler) {
  auto segments = SplitPath(pattern);
  routes_.push_back({std::move(method), std::move(pattern), std::move(segments), access, std::move(handler)});
}

void Router::AddSync(std::string method, std::string pattern, Access access, SyncApiHandler handler) {
  Add(std::move(method), std::move(pattern), access,
      [h = std::move(handler)](ApiRequest& req) -> boost::asio::awaitable<ApiResponse> { co_return h(req); });
}

std::vector<RouteInfo> Router::Routes() const {
  std::vector<RouteInfo> out;
  for (const auto& r : routes_) out.push_back({r.method, r.pattern, r.access});
  return out;
}

Status Router::Authorize(ApiRequest& req, Access access) const {
  if (access == Access::kPublic) return Status::Ok();
  if (access == Access::kAllocation) {
    if (!allocation_authorizer_ || req.params.empty())
      return {ErrorCode::kUnauthenticated, "this server takes no allocation tokens"};
    return allocation_authorizer_(req.params[0], req.BearerToken());
  }
  if (!authenticator_) return {ErrorCode::kUnauthenticated, "this server signs nobody in"};
  auto principal = authenticator_(req.BearerToken());
  if (!principal.ok()) return principal.status();
  req.principal = std::move(principal).value();
  if (access == Access::kAdmin && !req.principal->admin())
    return {ErrorCode::kPermissionDenied,
            req.method + " " + req.path + " is for admins; " + req.principal->username + " is not one"};
  return Status::Ok();
}

boost::asio::awaitable<ApiResponse> Router::Dispatch(ApiRequest& req) const {
  const auto start = std::chrono::steady_clock::now();
  std::string pattern = "unmatched";
  ApiResponse response = co_await Route(req, pattern);
  if (observer_)
    observer_(MethodLabel(req.method), pattern, response.status,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  co_return response;
}

const Router::RouteEntry* Router::Find(ApiRequest& req, Status& error) const {
  const auto segments = SplitPath(req.path);
  bool path_matched = false;
  for (const auto& route : routes_) {
    if (route.segments.size() != segments.size()) continue;
    std::vector<std::string> params;
    bool match = true;
    for (size_t i = 0; i < segments.size() && match; ++i) {
      const auto& want = route.segments[i];
      if (want.size() > 2 && want.front() == '{' && want.back() == '}')
        params.push_back(segments[i]);
      else
        match = want == segments[i];
    }
    if (!match) continue;
    path_matched = true;
    if (route.method != req.method) continue;
    req.params = std::move(params);
    return &route;
  }
  if (path_matched)
    error = {ErrorCode::kInvalidArgument, "method " + req.method + " is not allowed on " + req.path};
  else
    error = NotFound("no such endpoint: " + req.method + " " + req.path);
  return nullptr;
}

ApiResponse Router::ErrorAnswer(const Status& error) {
  auto r = ApiResponse::Error(error);
  // Only a wrong method on a known path is an invalid argument here.
  if (error.code() == ErrorCode::kInvalidArgument) r.status = 405;
  return r;
}

std::optional<ApiResponse> Router::Admit(ApiRequest& req) const {
  Status error;
  const RouteEntry* route = Find(req, error);
  if (route == nullptr) return ErrorAnswer(error);
  if (Status s = Authorize(req, route->access); !s.ok()) return ApiResponse::Error(s);
  return std::nullopt;
}

boost::asio::awaitable<ApiResponse> Router::Route(ApiRequest& req, std::string& pattern) const {
  Status error;
  const RouteEntry* route = Find(req, error);
  if (route == nullptr) co_return ErrorAnswer(error);
  pattern = route->pattern;
  if (Status s = Authorize(req, route->access); !s.ok()) co_return ApiResponse::Error(s);
  co_return co_await route->handler(req);
}

}  // namespace ring
