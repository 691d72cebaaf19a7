#pragma once
// Keeps the database bounded for a master that runs for months.
//  - Training metrics reported more than `metrics_full_resolution_days` ago
//    are thinned, per trial, to about `metrics_max_points` per metric with
//    the same LTTB choice the charts make (master/queries/metric_series.h), so
//    an old trial's curves look as they did. Validation metrics are kept.
//  - Log lines of trials that ended more than `log_retention_days` ago are
//    deleted; an experiment's own `log_retention_days` overrides the master's.
//  - Then the freed pages go back to the file system and the write-ahead log
//    is truncated (Store::Compact).
// A pass runs on the master's maintenance thread every `interval`, and when
// an admin asks (POST /api/v1/master/retention, `ring master cleanup`).
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "master/store/store.h"

namespace ring {

struct RetentionOptions {
  int64_t interval_minutes = 60;              // between passes; 0: only when asked
  int64_t log_retention_days = -1;            // -1 keeps logs
  int64_t metrics_full_resolution_days = 30;  // -1 never thins metrics
  int64_t metrics_max_points = 1000;          // per metric of a trial, among the thinned reports
};

struct RetentionReport {
  std::string started_at;  // RFC 3339
  double seconds = 0;
  int64_t trials = 0;                  // looked at
  int64_t trials_thinned = 0;          // whose training metrics lost reports
  int64_t metric_reports_deleted = 0;  // training reports removed
  int64_t trials_logs_deleted = 0;     // whose logs went
  int64_t tasks_logs_deleted = 0;      // tasks other than trials whose logs went
  int64_t log_lines_deleted = 0;
  nlohmann::json ToJson() const;
};

class Retention {
 public:
  Retention(Store& store, RetentionOptions options);

  // One pass over every trial, then Store::Compact. Passes never overlap: a
  // second caller waits for the first to finish.
  Result<RetentionReport> Run(std::chrono::system_clock::time_point now);

  std::optional<RetentionReport> last() const;
  const RetentionOptions& options() const { return options_; }

 private:
  // The log retention of an experiment: its config's, else the master's.
  int64_t LogDays(const ExperimentRecord& e);
  Status Thin(const TrialRecord& t, const std::string& cutoff, RetentionReport& report);

  Store& store_;
  const RetentionOptions options_;
  std::mutex run_mu_;  // one pass at a time
  // By experiment: the hash of the config text it was read from (a
  // retention change rewrites the config) and the days.
  std::map<int64_t, std::pair<size_t, int64_t>> log_days_;
  std::set<int64_t> thinned_for_good_;  // ended before the cutoff and thinned: nothing changes
  std::set<int64_t> logs_gone_;         // trials whose logs were deleted
  mutable std::mutex last_mu_;
  std::optional<RetentionReport> last_;
};

}  // namespace ring
