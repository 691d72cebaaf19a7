#pragma once
// What the Context hands its Searcher: how to reach the master, which rank
// this is, and two hooks into the Context's metric reporting.
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>

namespace ring::trial::detail {

class TrialApi;

struct SearcherSetup {
  std::shared_ptr<TrialApi> api;      // null in local mode
  bool chief = true;                  // rank 0: posts completions and invalid hyperparameters
  std::optional<int64_t> max_length;  // the single operation's length (local mode, 404 fallback)
  std::string metric_name = "validation_loss";
  std::ostream* out = nullptr;          // local mode's reports
  std::ostream* diagnostics = nullptr;  // notes and warnings
  // Reports `metric` as validation metric `name` at `batches` unless the
  // last validation report at `batches` already included `name`.
  std::function<void(int64_t batches, const std::string& name, double metric)> ensure_validation;
  // Waits until the master acknowledged every metric report so far; throws
  // AllocationEndedError or MasterUnreachableError when they cannot arrive.
  std::function<void()> settle_reports;
};

}  // namespace ring::trial::detail
