#pragma once
// Maps (method, path pattern) to a handler. Patterns are literal segments and
// "{name}" captures, e.g. "/api/v1/trials/{id}/metrics"; captures land in
// ApiRequest::params in order. Handlers are coroutines so a long poll can
// wait without holding a thread. Built once at start, then read-only.
#include <functional>
#include <string>
#include <vector>

#include <utility>  // before Asio (std::exchange with g++ 12)

#include <boost/asio/awaitable.hpp>

#include "master/http/api_types.h"

namespace ring {

using ApiHandler = std::function<boost::asio::awaitable<ApiResponse>(ApiRequest&)>;
using SyncApiHandler = std::function<ApiResponse(ApiRequest&)>;

class Router {
 public:
  void Add(std::string method, std::string pattern, ApiHandler handler);
  void AddSync(std::string method, std::string pattern, SyncApiHandler handler);

  // Finds the handler and fills req.params. A path that matches with another
  // method gives 405; no match gives 404.
  boost::asio::awaitable<ApiResponse> Dispatch(ApiRequest& req) const;

 private:
  struct Route {
    std::string method;
    std::vector<std::string> segments;  // "{x}" marks a capture
    ApiHandler handler;
  };
  std::vector<Route> routes_;
};

// Splits "/a/b/c" into {"a","b","c"}.
std::vector<std::string> SplitPath(const std::string& path);

}  // namespace ring
