#include "master/maintenance/retention.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "common/experiment_config.h"
#include "master/queries/metric_series.h"

namespace ring {
namespace {

std::string DaysBefore(std::chrono::system_clock::time_point now, int64_t days) {
  return FormatRfc3339(now - std::chrono::hours(24 * days));
}

bool HasNumericMetric(const MetricReport& r) {
  bool any = false;
  ForEachMetric(r.metrics_json, [&any](std::string_view, double) { any = true; });
  return any;
}

}  // namespace

nlohmann::json RetentionReport::ToJson() const {
  return {{"started_at", started_at},
          {"seconds", seconds},
          {"trials", trials},
          {"trials_thinned", trials_thinned},
          {"metric_reports_deleted", metric_reports_deleted},
          {"trials_logs_deleted", trials_logs_deleted},
          {"tasks_logs_deleted", tasks_logs_deleted},
          {"log_lines_deleted", log_lines_deleted}};
}

Retention::Retention(Store& store, RetentionOptions options) : store_(store), options_(options) {}

std::optional<RetentionReport> Retention::last() const {
  std::lock_guard lock(last_mu_);
  return last_;
}

int64_t Retention::LogDays(const ExperimentRecord& e) {
  const size_t hash = std::hash<std::string>{}(e.config_yaml);
  auto it = log_days_.find(e.id);
  if (it != log_days_.end() && it->second.first == hash) return it->second.second;
  int64_t days = options_.log_retention_days;
  // A stored config parsed when it was submitted; one that no longer parses
  // (an older master's) falls back to the master's setting.
  if (auto config = ParseExperimentConfig(e.config_yaml); config.ok() && config->log_retention_days)
    days = *config->log_retention_days;
  log_days_[e.id] = {hash, days};
  return days;
}

// Thins the training reports made before `cutoff`: each metric keeps at most
// max_points of them (LTTB), and a report without any number is kept.
Status Retention::Thin(const TrialRecord& t, const std::string& cutoff, RetentionReport& report) {
  const auto max_points = static_cast<size_t>(options_.metrics_max_points);
  auto count = store_.CountMetrics(t.id, MetricKind::kTraining);
  if (!count.ok()) return count.status();
  if (*count <= options_.metrics_max_points) return Status::Ok();
  auto reports = store_.GetMetrics(t.id, MetricKind::kTraining);
  if (!reports.ok()) return reports.status();
  std::vector<MetricReport> old;
  for (auto& r : *reports)
    if (r.reported_at < cutoff) old.push_back(std::move(r));
  if (old.size() <= max_points) return Status::Ok();
  std::vector<char> keep(old.size(), 0);
  for (size_t i : DownsampleReports(old, "", max_points)) keep[i] = 1;
  std::vector<int64_t> drop;
  for (size_t i = 0; i < old.size(); ++i)
    if (!keep[i] && HasNumericMetric(old[i])) drop.push_back(old[i].batches);
  if (drop.empty()) return Status::Ok();
  auto deleted = store_.DeleteMetrics(t.id, MetricKind::kTraining, drop);
  if (!deleted.ok()) return deleted.status();
  report.trials_thinned += 1;
  report.metric_reports_deleted += *deleted;
  return Status::Ok();
}

Result<RetentionReport> Retention::Run(std::chrono::system_clock::time_point now) {
  std::lock_guard run(run_mu_);
  const auto start = std::chrono::steady_clock::now();
  RetentionReport report;
  report.started_at = FormatRfc3339(now);
  const bool thin = options_.metrics_full_resolution_days >= 0 && options_.metrics_max_points > 0;
  const std::string metrics_cutoff = thin ? DaysBefore(now, options_.metrics_full_resolution_days) : "";
  for (int64_t offset = 0;;) {
    auto page = store_.ListExperiments(200, offset);
    if (!page.ok()) return page.status();
    for (const ExperimentRecord& e : page->items) {
      auto trials = store_.ListTrials(e.id);
      if (!trials.ok()) return trials.status();
      const int64_t log_days = LogDays(e);
      const std::string log_cutoff = log_days >= 0 ? DaysBefore(now, log_days) : "";
      for (const TrialRecord& t : *trials) {
        ++report.trials;
        if (thin && !thinned_for_good_.contains(t.id)) {
          if (Status s = Thin(t, metrics_cutoff, report); !s.ok()) return s;
          // Every report of a trial that ended before the cutoff is older than it.
          if (!t.ended_at.empty() && t.ended_at < metrics_cutoff) thinned_for_good_.insert(t.id);
        }
        if (log_days >= 0 && !t.ended_at.empty() && t.ended_at < log_cutoff && !logs_gone_.contains(t.id)) {
          auto deleted = store_.DeleteLogs(t.id);
          if (!deleted.ok()) return deleted.status();
          logs_gone_.insert(t.id);
          if (*deleted > 0) {
            report.trials_logs_deleted += 1;
            report.log_lines_deleted += *deleted;
          }
        }
      }
    }
    offset += static_cast<int64_t>(page->items.size());
    if (page->items.empty() || offset >= page->total) break;
  }
  // Tasks that are not trials follow the master's log retention.
  if (options_.log_retention_days >= 0) {
    auto ended = store_.ListEndedTasksWithLogs(DaysBefore(now, options_.log_retention_days));
    if (!ended.ok()) return ended.status();
    for (int64_t task_id : *ended) {
      auto deleted = store_.DeleteTaskLogs(task_id);
      if (!deleted.ok()) return deleted.status();
      report.tasks_logs_deleted += 1;
      report.log_lines_deleted += *deleted;
    }
  }
  if (Status s = store_.Compact(); !s.ok()) return s;
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::lock_guard lock(last_mu_);
  last_ = report;
  return report;
}

}  // namespace ring
