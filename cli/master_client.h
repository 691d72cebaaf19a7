#pragma once
// MasterClient: the CLI's view of the master's REST API. Decodes JSON
// bodies and turns error answers into Status values whose code tells the
// exit code: transport failures stay kUnavailable/kTimeout (exit 3), any
// answer of the master with an error status gets another code (exit 1).
// Blocking; CLI thread only.
#include <chrono>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "common/http_client.h"
#include "common/status.h"

namespace ring::cli {

enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,      // the master reported a failure; experiment not COMPLETED
  kExitUsage = 2,        // bad arguments
  kExitUnreachable = 3,  // the master could not be reached
};

// True for failures to reach the master (as opposed to its error answers).
bool IsTransportError(const Status& status);
int ExitCodeFor(const Status& status);

class MasterClient {
 public:
  explicit MasterClient(Url url);

  Result<nlohmann::json> Get(const std::string& target);
  // The raw body of a GET (downloads), with the same error handling.
  Result<std::string> GetBytes(const std::string& target);
  Result<nlohmann::json> Post(const std::string& target, const nlohmann::json& body);
  Result<nlohmann::json> Patch(const std::string& target, const nlohmann::json& body);
  Result<nlohmann::json> Put(const std::string& target, const nlohmann::json& body);
  Result<nlohmann::json> Delete(const std::string& target);
  // Posts a large body, reporting (sent, total) bytes as it goes.
  Result<nlohmann::json> PostWithProgress(const std::string& target, const std::string& body,
                                          const HttpClient::UploadProgress& progress);

  const Url& url() const { return url_; }
  // The CA file (PEM) trusted for an https master besides the system's CAs ("" = none).
  void SetCaFile(std::string path) {
    ca_file_ = path;
    http_->SetCaFile(std::move(path));
  }
  // Sent as the bearer token of every request from now on.
  void SetToken(std::string token) {
    token_ = token;
    http_->SetBearerToken(std::move(token));
  }
  // What a connection of its own (a terminal's WebSocket) needs.
  const std::string& token() const { return token_; }
  const std::string& ca_file() const { return ca_file_; }

 private:
  Result<nlohmann::json> Decode(Result<HttpResponse> response);
  Status CheckAnswer(const Result<HttpResponse>& response);

  Url url_;
  std::string token_;
  std::string ca_file_;
  std::unique_ptr<HttpClient> http_;
};

using ring::PercentEncode;

}  // namespace ring::cli
