#include "http_metrics_sink.h"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "ring/trial/errors.h"

namespace ring::trial {
HttpMetricsSink::HttpMetricsSink(const std::string& master_url, std::string allocation_id, std::string token,
                                 std::chrono::milliseconds timeout)
    : target_("/api/v1/allocations/" + ring::PercentEncode(allocation_id) + "/metrics") {
  auto url = ring::Url::Parse(master_url);
  if (!url.ok()) throw ConfigError("RING_MASTER_URL: " + url.status().message());
  client_ = std::make_unique<ring::HttpClient>(*url, timeout);
  client_->SetBearerToken(std::move(token));
}

HttpMetricsSink::~HttpMetricsSink() = default;

std::string HttpMetricsSink::EncodeBatch(const std::vector<MetricReport>& batch) {
  nlohmann::json reports = nlohmann::json::array();
  for (const auto& r : batch) {
    reports.push_back({{"kind", MetricKindName(r.kind)}, {"batches", r.batches}, {"metrics", r.metrics}});
  }
  return nlohmann::json{{"reports", std::move(reports)}}.dump();
}

SendResult HttpMetricsSink::send(const std::vector<MetricReport>& batch) {
  auto response = client_->Post(target_, EncodeBatch(batch));
  if (!response.ok()) return {SendOutcome::kTransientFailure, response.status().message()};
  const int status = response->status;
  if (status >= 200 && status < 300) return {SendOutcome::kAcknowledged, {}};
  std::string message = ring::ErrorMessageFromBody(*response);
  // Retrying can help only when the master is overloaded or failing.
  if (status >= 500 || status == 429 || status == 408) return {SendOutcome::kTransientFailure, message};
  if (status == 401 || status == 403 || status == 404 || status == 409)
    return {SendOutcome::kAllocationEnded, "HTTP " + std::to_string(status) + ": " + message};
  return {SendOutcome::kRejected, "HTTP " + std::to_string(status) + ": " + message};
}

}  // namespace ring::trial
