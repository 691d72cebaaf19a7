#include "trial_api.h"

#include <algorithm>
#include <thread>

#include "common/http_client.h"
#include "ring/trial/errors.h"

namespace ring::trial::detail {

TrialApi::TrialApi(std::string master_url, std::string allocation_id, std::string token,
                   std::chrono::seconds retry_for)
    : master_url_(std::move(master_url)),
      allocation_id_(std::move(allocation_id)),
      token_(std::move(token)),
      retry_for_(retry_for) {}

ApiReply TrialApi::Call(const std::string& method, const std::string& path, const std::string& body,
                        std::chrono::milliseconds timeout) {
  return Exchange(method, path, body, "application/json", true, timeout);
}

ApiReply TrialApi::CallBytes(const std::string& method, const std::string& path, const std::string& body,
                             std::chrono::milliseconds timeout) {
  return Exchange(method, path, body, "application/octet-stream", false, timeout);
}

ApiReply TrialApi::Exchange(const std::string& method, const std::string& path, const std::string& body,
                            const std::string& content_type, bool json, std::chrono::milliseconds timeout) {
  auto url = ring::Url::Parse(master_url_);
  if (!url.ok()) return {0, nullptr, url.status().message()};
  const std::string target = "/api/v1/allocations/" + ring::PercentEncode(allocation_id_) + path;
  const auto give_up = std::chrono::steady_clock::now() + retry_for_;
  auto backoff = std::chrono::milliseconds(200);
  ApiReply reply;
  for (;;) {
    ring::HttpClient client(*url, timeout);
    client.SetBearerToken(token_);
    auto res = client.Request(method, target, body, content_type);
    if (res.ok()) {
      reply.status = res->status;
      reply.error = reply.ok() ? std::string() : ring::ErrorMessageFromBody(*res);
      if (json) {
        reply.body = nlohmann::json::parse(res->body, nullptr, false);
        if (reply.body.is_discarded()) reply.body = nullptr;
      } else {
        reply.raw = std::move(res->body);
      }
      if (res->status < 500) return reply;  // 2xx, or a 4xx retrying cannot fix
    } else {
      reply = {0, nullptr, res.status().message()};
      if (ring::IsCertificateFailure(res.status())) return reply;  // retrying cannot fix the certificate
    }
    if (std::chrono::steady_clock::now() + backoff > give_up) return reply;
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, std::chrono::milliseconds(5000));
  }
}

std::string Describe(const ApiReply& reply) {
  if (reply.status == 0) return reply.error;
  return "HTTP " + std::to_string(reply.status) + (reply.error.empty() ? "" : ": " + reply.error);
}

void ThrowIfUnreachableOrEnded(const ApiReply& reply, const std::string& what) {
  if (reply.status == 0 || reply.status >= 500)
    throw MasterUnreachableError("the master did not answer while " + what + " (" + Describe(reply) +
                                 "); gave up after the retry budget (RING_API_RETRY_SECONDS)");
  if (reply.status == 401 || reply.status == 409)
    throw AllocationEndedError("the master ended this allocation (" + Describe(reply) + ") while " + what +
                               "; this process must stop");
}

}  // namespace ring::trial::detail
