#include "cli/master_client.h"

#include <cctype>
#include <cstdio>

namespace ring::cli {

bool IsTransportError(const Status& status) {
  return status.code() == ErrorCode::kUnavailable || status.code() == ErrorCode::kTimeout;
}

int ExitCodeFor(const Status& status) {
  if (status.ok()) return kExitOk;
  return IsTransportError(status) ? kExitUnreachable : kExitFailure;
}

MasterClient::MasterClient(Url url)
    : url_(std::move(url)), http_(std::make_unique<HttpClient>(url_, std::chrono::seconds(60))) {}

Result<nlohmann::json> MasterClient::Get(const std::string& target) {
  return Decode(http_->Get(target));
}

namespace {

// The JSON text of a request body; arguments that are not UTF-8 text are
// refused here instead of throwing out of the command.
Result<std::string> BodyText(const nlohmann::json& body) {
  try {
    return body.dump();
  } catch (const nlohmann::json::type_error&) {
    return InvalidArgument("an argument is not UTF-8 text");
  }
}

}  // namespace

Result<nlohmann::json> MasterClient::Post(const std::string& target, const nlohmann::json& body) {
  auto text = BodyText(body);
  if (!text.ok()) return text.status();
  return Decode(http_->Post(target, *text));
}

Result<nlohmann::json> MasterClient::Patch(const std::string& target, const nlohmann::json& body) {
  auto text = BodyText(body);
  if (!text.ok()) return text.status();
  return Decode(http_->Request("PATCH", target, *text));
}

Result<nlohmann::json> MasterClient::Put(const std::string& target, const nlohmann::json& body) {
  auto text = BodyText(body);
  if (!text.ok()) return text.status();
  return Decode(http_->Request("PUT", target, *text));
}

Result<nlohmann::json> MasterClient::Delete(const std::string& target) {
  return Decode(http_->Request("DELETE", target, ""));
}

Result<nlohmann::json> MasterClient::PostWithProgress(const std::string& target, const std::string& body,
                                                      const HttpClient::UploadProgress& progress) {
  return Decode(http_->RequestWithProgress("POST", target, body, progress));
}

Result<std::string> MasterClient::GetBytes(const std::string& target) {
  auto response = http_->Get(target);
  if (Status s = CheckAnswer(response); !s.ok()) return s;
  return std::move(response->body);
}

Status MasterClient::CheckAnswer(const Result<HttpResponse>& response) {
  if (!response.ok()) {
    const Status& s = response.status();
    // The master answered, but its certificate did not verify: the message says what to do.
    if (IsCertificateFailure(s)) return Status(s.code(), s.message());
    return Status(s.code(), "cannot reach the master at " + url_.ToString() + " (" + s.message() +
                                "); is it running? Pass -m URL or set RING_MASTER");
  }
  const int status = response->status;
  if (status < 200 || status >= 300) {
    // Never kUnavailable/kTimeout here: the master answered.
    ErrorCode code = ErrorCode::kInternal;
    if (status == 400) code = ErrorCode::kInvalidArgument;
    if (status == 401) code = ErrorCode::kUnauthenticated;
    if (status == 403) code = ErrorCode::kPermissionDenied;
    if (status == 404) code = ErrorCode::kNotFound;
    if (status == 409) code = ErrorCode::kConflict;
    if (status == 413) code = ErrorCode::kTooLarge;
    if (status == 429) code = ErrorCode::kTooManyRequests;
    return Status(code, ErrorMessageFromBody(*response));
  }
  return Status::Ok();
}

Result<nlohmann::json> MasterClient::Decode(Result<HttpResponse> response) {
  if (Status s = CheckAnswer(response); !s.ok()) return s;
  if (response->body.empty()) return nlohmann::json::object();
  auto json = nlohmann::json::parse(response->body, nullptr, false);
  if (json.is_discarded())
    return Internal("the master answered with malformed JSON: " + response->body.substr(0, 200));
  return json;
}

}  // namespace ring::cli
