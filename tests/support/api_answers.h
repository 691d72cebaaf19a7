#pragma once
// The master's answers to a test, checked against docs/openapi.json: the
// harness records every answer it gets (CheckedHttpClient, TestCluster) and,
// when the test ends, one run of tests/openapi/check_answers.mjs (Ajv, with
// the document's schemas) checks each one's status, media type and body
// against its operation's response.
#include <mutex>
#include <string>
#include <vector>

#include "common/status.h"

namespace ring::testing {

struct ApiAnswer {
  std::string method;  // "GET", ...
  std::string target;  // the path and query, as requested
  int status = 0;
  std::string content_type;
  std::string body;
};

// Writes `answers` to `scratch_file` (JSON lines) and checks them. Ok when
// every answer matches the document; kInvalidArgument listing each mismatch
// (route, status, the validator's errors); kUnavailable when the checker
// cannot run (Node.js or its packages missing). Runs `node`, or $RING_NODE.
Status CheckApiAnswers(const std::vector<ApiAnswer>& answers, const std::string& scratch_file);

// The answers of one test; Add is called from any thread.
class ApiAnswerLog {
 public:
  void Add(ApiAnswer answer);
  // Checks the answers added so far (CheckApiAnswers) and forgets them.
  Status CheckAndClear(const std::string& scratch_file);

 private:
  std::mutex mu_;
  std::vector<ApiAnswer> answers_;  // guarded by mu_
};

}  // namespace ring::testing
