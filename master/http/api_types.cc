#include "master/http/api_types.h"

namespace ring {

std::string ApiRequest::Header(const std::string& name) const {
  auto it = headers.find(name);
  return it == headers.end() ? std::string() : it->second;
}

std::string ApiRequest::BearerToken() const {
  std::string value = Header("authorization");
  constexpr std::string_view kPrefix = "Bearer ";
  if (value.size() > kPrefix.size() && value.compare(0, kPrefix.size(), kPrefix) == 0)
    return value.substr(kPrefix.size());
  return {};
}

std::string ApiResponse::Header(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (k == name) return v;
  return {};
}

ApiResponse ApiResponse::Json(const nlohmann::json& j, int status) {
  ApiResponse r;
  r.status = status;
  r.body = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return r;
}

ApiResponse ApiResponse::Error(const Status& status) {
  nlohmann::json body = {{"error", {{"code", ErrorCodeName(status.code())}, {"message", status.message()}}}};
  return Json(body, HttpStatusFor(status.code()));
}

int HttpStatusFor(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk:
      return 200;
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kInvalidConfig:
      return 400;
    case ErrorCode::kUnauthenticated:
      return 401;
    case ErrorCode::kPermissionDenied:
      return 403;
    case ErrorCode::kNotFound:
      return 404;
    case ErrorCode::kConflict:
      return 409;
    case ErrorCode::kTooLarge:
      return 413;
    case ErrorCode::kTooManyRequests:
      return 429;
    case ErrorCode::kUnavailable:
      return 503;
    case ErrorCode::kTimeout:
      return 504;
    case ErrorCode::kInternal:
      return 500;
  }
  return 500;
}

}  // namespace ring
