#include "master/http/router.h"

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

void Router::Add(std::string method, std::string pattern, ApiHandler handler) {
  routes_.push_back({std::move(method), SplitPath(pattern), std::move(handler)});
}

void Router::AddSync(std::string method, std::string pattern, SyncApiHandler handler) {
  Add(std::move(method), std::move(pattern),
      [h = std::move(handler)](ApiRequest& req) -> boost::asio::awaitable<ApiResponse> { co_return h(req); });
}

boost::asio::awaitable<ApiResponse> Router::Dispatch(ApiRequest& req) const {
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
    co_return co_await route.handler(req);
  }
  if (path_matched) {
    auto r = ApiResponse::Error(
        {ErrorCode::kInvalidArgument, "method " + req.method + " is not allowed on " + req.path});
    r.status = 405;
    co_return r;
  }
  co_return ApiResponse::Error(NotFound("no such endpoint: " + req.method + " " + req.path));
}

}  // namespace ring
