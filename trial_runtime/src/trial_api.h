#pragma once
// The trial API of one allocation (checkpoints, preemption), with retries:
// transport errors and 5xx answers are retried with capped exponential
// backoff for `retry_for` in all, so a master restart is survived. Every
// call uses its own connection, so any thread may call.
#include <chrono>
#include <string>

#include <nlohmann/json.hpp>

namespace ring::trial::detail {

struct ApiReply {
  int status = 0;       // 0: the master was never reached
  nlohmann::json body;  // parsed JSON, or null (always null from CallBytes)
  std::string error;    // readable reason when not 2xx
  std::string raw;      // the body as received (CallBytes only)
  bool ok() const { return status >= 200 && status < 300; }
};

class TrialApi {
 public:
  TrialApi(std::string master_url, std::string allocation_id, std::string token,
           std::chrono::seconds retry_for);

  // `path` is relative to /api/v1/allocations/<id>, e.g. "/checkpoints".
  ApiReply Call(const std::string& method, const std::string& path, const std::string& body = {},
                std::chrono::milliseconds timeout = std::chrono::seconds(30));
  // The same with raw bytes both ways (application/octet-stream): the reply's
  // body stays null and `raw` holds what the master sent.
  ApiReply CallBytes(const std::string& method, const std::string& path, const std::string& body,
                     std::chrono::milliseconds timeout);

  const std::string& allocation_id() const { return allocation_id_; }

 private:
  ApiReply Exchange(const std::string& method, const std::string& path, const std::string& body,
                    const std::string& content_type, bool json, std::chrono::milliseconds timeout);

  std::string master_url_;
  std::string allocation_id_;
  std::string token_;
  std::chrono::seconds retry_for_;
};

// Throws MasterUnreachableError (never reached, or 5xx after every retry) or
// AllocationEndedError (401, 409) for such a reply; returns for any other.
// `what` says what was being done, e.g. "registering checkpoint <uuid>".
void ThrowIfUnreachableOrEnded(const ApiReply& reply, const std::string& what);

// "HTTP 409: allocation 3.0 has ended", or the transport error.
std::string Describe(const ApiReply& reply);

}  // namespace ring::trial::detail
