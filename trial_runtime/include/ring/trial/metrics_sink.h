#pragma once
// The boundary between the metrics reporter and the network: one call sends
// one batch of reports and says what became of it. The real sink posts to the
// master's trial API; tests use a fake.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ring::trial {

enum class MetricKind { kTraining, kValidation };

const char* MetricKindName(MetricKind kind);  // "training" | "validation"

struct MetricReport {
  MetricKind kind = MetricKind::kTraining;
  int64_t batches = 0;
  std::map<std::string, double> metrics;
};

enum class SendOutcome {
  kAcknowledged,      // stored (or already stored) by the master
  kTransientFailure,  // connection error, timeout, 5xx: retry the same batch
  kRejected,          // the master refused this batch (4xx): retrying cannot help; drop it
  kAllocationEnded,   // 401/409: this process may no longer report; drop everything
};

struct SendResult {
  SendOutcome outcome = SendOutcome::kAcknowledged;
  std::string message;  // why, when not acknowledged
};

// Sends batches of reports. Called from one thread only (the reporter's
// sender thread), so implementations need no locking of their own.
class MetricsSink {
 public:
  virtual ~MetricsSink() = default;
  virtual SendResult send(const std::vector<MetricReport>& batch) = 0;
};

}  // namespace ring::trial
