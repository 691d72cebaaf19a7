#pragma once
// An HttpClient whose every answer goes into an ApiAnswerLog, to be checked
// against docs/openapi.json when the test ends (TestCluster does). Tests talk
// to the master through it, never through a bare HttpClient. Not
// thread-safe, like HttpClient: one per thread.
#include <chrono>
#include <memory>
#include <string>

#include "common/http_client.h"
#include "tests/support/api_answers.h"

namespace ring::testing {

class CheckedHttpClient {
 public:
  CheckedHttpClient(Url base, std::shared_ptr<ApiAnswerLog> answers,
                    std::chrono::milliseconds timeout = std::chrono::seconds(30));

  void SetBearerToken(std::string token) { http_.SetBearerToken(std::move(token)); }
  void SetTimeout(std::chrono::milliseconds timeout) { http_.SetTimeout(timeout); }
  void SetCaFile(std::string path) { http_.SetCaFile(std::move(path)); }

  // As HttpClient's; an answer (any status) is recorded.
  Result<HttpResponse> Request(std::string_view method, const std::string& target,
                               const std::string& body = {},
                               const std::string& content_type = "application/json");
  Result<HttpResponse> Get(const std::string& target) { return Request("GET", target); }
  Result<HttpResponse> Post(const std::string& target, const std::string& body) {
    return Request("POST", target, body);
  }

 private:
  HttpClient http_;
  std::shared_ptr<ApiAnswerLog> answers_;
};

}  // namespace ring::testing
