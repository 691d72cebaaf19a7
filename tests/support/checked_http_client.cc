#include "tests/support/checked_http_client.h"

namespace ring::testing {

CheckedHttpClient::CheckedHttpClient(Url base, std::shared_ptr<ApiAnswerLog> answers,
                                     std::chrono::milliseconds timeout)
    : http_(std::move(base), timeout), answers_(std::move(answers)) {}

Result<HttpResponse> CheckedHttpClient::Request(std::string_view method, const std::string& target,
                                                const std::string& body, const std::string& content_type) {
  auto res = http_.Request(method, target, body, content_type);
  if (res.ok()) {
    auto type = res->headers.find("content-type");
    answers_->Add({std::string(method), target, res->status,
                   type == res->headers.end() ? std::string() : type->second, res->body});
  }
  return res;
}

}  // namespace ring::testing
