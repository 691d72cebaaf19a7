#pragma once
// Transport-neutral request and response of the REST API, so handlers and
// their tests never include Beast.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/body_stream.h"
#include "common/status.h"
#include "master/auth/principal.h"

namespace ring {

struct ApiRequest {
  std::string method;                          // "GET", "POST", ...
  std::string path;                            // decoded path without the query
  std::map<std::string, std::string> query;    // decoded query parameters
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  std::vector<std::string> params;  // captures of the route pattern
  std::string peer;                 // remote address
  // The signed-in user, set by the router before a kUser or kAdmin handler.
  std::optional<Principal> principal;

  std::string Header(const std::string& name) const;
  // The token of "Authorization: Bearer <token>", empty when absent.
  std::string BearerToken() const;
};

struct ApiResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  // Known ahead by answers kept ready (ResponseCache): the ETag of `body`,
  // so it is not hashed per request, and `body` gzip-compressed, sent to
  // clients that accept it (ApplyContentEncoding). Empty / null otherwise.
  std::string etag;
  std::shared_ptr<const std::string> gzip_body;
  // A large answer sent as it is produced (chunked), instead of `body`
  // (streamed_body.h). Content-Type and headers apply; no ETag, no gzip.
  std::shared_ptr<BodyStream> stream;

  static ApiResponse Json(const nlohmann::json& j, int status = 200);
  // The value of the first header named `name` (as set, case included); empty if none.
  std::string Header(std::string_view name) const;
  // {"error": {"code", "message"}} with the status chosen from the code.
  static ApiResponse Error(const Status& status);
};

// The one place where error codes become HTTP statuses.
int HttpStatusFor(ErrorCode code);

}  // namespace ring
