#include "common/status.h"

#include <cstdio>
#include <cstdlib>

namespace ring {

const char* ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk:
      return "ok";
    case ErrorCode::kInvalidArgument:
      return "invalid_argument";
    case ErrorCode::kInvalidConfig:
      return "invalid_config";
    case ErrorCode::kUnauthenticated:
      return "unauthenticated";
    case ErrorCode::kPermissionDenied:
      return "permission_denied";
    case ErrorCode::kNotFound:
      return "not_found";
    case ErrorCode::kConflict:
      return "conflict";
    case ErrorCode::kTooLarge:
      return "too_large";
    case ErrorCode::kTooManyRequests:
      return "too_many_requests";
    case ErrorCode::kUnavailable:
      return "unavailable";
    case ErrorCode::kTimeout:
      return "timeout";
    case ErrorCode::kInternal:
      return "internal";
  }
  return "internal";
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  return std::string(ErrorCodeName(code_)) + ": " + message_;
}

namespace detail {

void ValueOfError(const Status& status) {
  std::fprintf(stderr, "fatal: the value of a Result that holds an error was read: %s\n",
               status.ToString().c_str());
  std::abort();
}

void ResultOfOk() {
  std::fputs("fatal: a Result was made of an OK status, without a value\n", stderr);
  std::abort();
}

}  // namespace detail

}  // namespace ring
