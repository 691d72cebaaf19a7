#pragma once
// HttpMetricsSink: posts batches of reports to the master's trial API,
// POST /api/v1/allocations/{id}/metrics, authorised by the allocation token.
// Runs on the reporter's sender thread only (HttpClient is not thread-safe).
#include <chrono>
#include <memory>
#include <string>

#include "common/http_client.h"
#include "ring/trial/metrics_sink.h"

namespace ring::trial {

class HttpMetricsSink : public MetricsSink {
 public:
  // Throws ConfigError when `master_url` does not parse.
  HttpMetricsSink(const std::string& master_url, std::string allocation_id, std::string token,
                  std::chrono::milliseconds timeout = std::chrono::seconds(10));
  ~HttpMetricsSink() override;

  SendResult send(const std::vector<MetricReport>& batch) override;

  // The request body for a batch (exposed for tests).
  static std::string EncodeBatch(const std::vector<MetricReport>& batch);

 private:
  std::string target_;
  std::unique_ptr<ring::HttpClient> client_;
};

}  // namespace ring::trial
