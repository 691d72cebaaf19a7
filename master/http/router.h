#pragma once
// Maps (method, path pattern) to a handler. Patterns are literal segments and
// "{name}" captures, e.g. "/api/v1/trials/{id}/metrics"; captures land in
// ApiRequest::params in order. Handlers are coroutines so a long poll can
// wait without holding a thread. Built once at start, then read-only.
//
// Every route says who may call it (Access). Before a kUser or kAdmin
// handler runs, the router resolves the bearer token into req.principal
// with the authenticator (401 when it cannot, 403 for a non-admin on an
// admin route); before a kAllocation handler, the allocation authorizer
// checks the trial's token against the allocation in the path. So no body
// is looked at before its caller is known. kPublic routes need nothing.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <utility>  // before Asio (std::exchange with g++ 12)

#include <boost/asio/awaitable.hpp>

#include "master/http/api_types.h"

namespace ring {

enum class Access {
  kPublic,      // anyone: health, sign-in
  kUser,        // any signed-in user; ownership is the handler's to check
  kAdmin,       // signed-in admins
  kAllocation,  // a trial process presenting its allocation's token
};
const char* AccessName(Access access);  // "public", "user", "admin", "allocation"

struct RouteInfo {
  std::string method;
  std::string pattern;
  Access access;
};

// Resolves a bearer token (possibly empty) into the user it signs in.
using Authenticator = std::function<Result<Principal>(const std::string& token)>;
// Checks a trial's bearer token against the allocation its path names.
using AllocationAuthorizer =
    std::function<Status(const std::string& allocation_id, const std::string& token)>;

using ApiHandler = std::function<boost::asio::awaitable<ApiResponse>(ApiRequest&)>;
using SyncApiHandler = std::function<ApiResponse(ApiRequest&)>;

class Router {
 public:
  void Add(std::string method, std::string pattern, Access access, ApiHandler handler);
  void AddSync(std::string method, std::string pattern, Access access, SyncApiHandler handler);
  // Without one, kUser and kAdmin routes answer 401.
  void SetAuthenticator(Authenticator authenticator) { authenticator_ = std::move(authenticator); }
  // Without one, kAllocation routes answer 401. Their pattern's first capture
  // is the allocation id.
  void SetAllocationAuthorizer(AllocationAuthorizer authorizer) {
    allocation_authorizer_ = std::move(authorizer);
  }
  // Called after every dispatched request with its method (MethodLabel),
  // route pattern ("unmatched" when none), status and duration (for the
  // master's metrics). Both come from closed sets, so requests with made-up
  // methods or paths cannot add metric series.
  using Observer =
      std::function<void(const std::string& method, const std::string& pattern, int status, double seconds)>;
  void SetObserver(Observer observer) { observer_ = std::move(observer); }
  // Every route, in registration order (for the authorisation matrix test).
  std::vector<RouteInfo> Routes() const;

  // Finds the handler and fills req.params. A path that matches with another
  // method gives 405; no match gives 404.
  boost::asio::awaitable<ApiResponse> Dispatch(ApiRequest& req) const;
  // Before a request's body is read: the answer that refuses `req` (no such
  // route, a wrong method, or a caller the route's Access does not let in),
  // or nullopt when Dispatch would run its handler. Looks only at the method,
  // path and headers, so a body is never read for a caller who may not send it.
  std::optional<ApiResponse> Admit(ApiRequest& req) const;

 private:
  struct RouteEntry {
    std::string method;
    std::string pattern;
    std::vector<std::string> segments;  // "{x}" marks a capture
    Access access;
    ApiHandler handler;
  };
  // The error that stops `req` from reaching a route of `access`, if any;
  // fills req.principal.
  Status Authorize(ApiRequest& req, Access access) const;
  // The route of req's method and path (filling req.params), or null with
  // the reason in `error`.
  const RouteEntry* Find(ApiRequest& req, Status& error) const;
  static ApiResponse ErrorAnswer(const Status& error);

  std::vector<RouteEntry> routes_;
  boost::asio::awaitable<ApiResponse> Route(ApiRequest& req, std::string& pattern) const;

  Authenticator authenticator_;
  AllocationAuthorizer allocation_authorizer_;
  Observer observer_;
};

// The method as a metric label: one of the methods the API uses, or "other".
const char* MethodLabel(const std::string& method);

// Splits "/a/b/c" into {"a","b","c"}.
std::vector<std::string> SplitPath(const std::string& path);

}  // namespace ring
