#pragma once
// Expected failures as values: Status and Result<T>. HTTP codes are chosen from
// ErrorCode in one place (HttpStatusFor in master/http/api_types.cc).
#include <optional>
#include <string>
#include <utility>

namespace ring {

enum class ErrorCode {
  kOk,
  kInvalidArgument,   // 400: bad input, names the field
  kInvalidConfig,     // 400: experiment config, names path and line
  kUnauthenticated,   // 401
  kPermissionDenied,  // 403
  kNotFound,          // 404
  kConflict,          // 409: wrong state, ended allocation
  kTooLarge,          // 413
  kTooManyRequests,   // 429: wait, then retry
  kUnavailable,       // 503: transient, retry
  kTimeout,           // 504 / wait expired
  kInternal,          // 500
};

const char* ErrorCodeName(ErrorCode code);  // "invalid_argument", ...

class Status;
namespace detail {
// Reading the value of a Result that holds an error, or making a Result of an
// OK status, is a bug: it prints what happened and aborts.
[[noreturn]] void ValueOfError(const Status& status);
[[noreturn]] void ResultOfOk();
}  // namespace detail

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status Ok() { return {}; }

  bool ok() const { return code_ == ErrorCode::kOk; }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string ToString() const;

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) {
  return {ErrorCode::kInvalidArgument, std::move(m)};
}
inline Status NotFound(std::string m) {
  return {ErrorCode::kNotFound, std::move(m)};
}
inline Status Conflict(std::string m) {
  return {ErrorCode::kConflict, std::move(m)};
}
inline Status Internal(std::string m) {
  return {ErrorCode::kInternal, std::move(m)};
}
inline Status Unavailable(std::string m) {
  return {ErrorCode::kUnavailable, std::move(m)};
}

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}         // NOLINT(google-explicit-constructor)
  Result(Status status) : status_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    if (status_.ok()) detail::ResultOfOk();
  }

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  T& value() & { return Checked(); }
  const T& value() const& { return Checked(); }
  T&& value() && { return std::move(Checked()); }
  T* operator->() { return &Checked(); }
  const T* operator->() const { return &Checked(); }
  T& operator*() & { return Checked(); }
  const T& operator*() const& { return Checked(); }

 private:
  T& Checked() {
    if (!value_) detail::ValueOfError(status_);
    return *value_;
  }
  const T& Checked() const {
    if (!value_) detail::ValueOfError(status_);
    return *value_;
  }

  Status status_;
  std::optional<T> value_;
};

}  // namespace ring
