#pragma once
// Metric series for charts. A metric's values are pulled out of stored
// reports with a scanner that does not build a JSON tree per report, and a
// long series is downsampled with Largest-Triangle-Three-Buckets (LTTB), which
// keeps the ends, peaks and dips, so a trial with a million reports is drawn
// from a thousand points that look the same. Pure functions: no store, no HTTP.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "master/store/store.h"

namespace ring {

// Calls `fn` for each top-level member of a metrics object ({"loss":0.5,...})
// whose value is a number; null and other values are skipped. False when
// `json` is not a well-formed object (then nothing or only a prefix was seen).
bool ForEachMetric(std::string_view json, const std::function<void(std::string_view name, double value)>& fn);

// The value of one metric of a metrics object; nullopt when absent or not a number.
std::optional<double> MetricValue(std::string_view json, std::string_view name);

// Indices (ascending) of at most `max_points` points of (x[i], y[i]) chosen by
// LTTB, with x ascending. Every index when there are no more than
// `max_points`; the first and the last point are always kept. max_points >= 2.
std::vector<size_t> LttbIndices(std::span<const double> x, std::span<const double> y, size_t max_points);

// One metric of a trial's reports (ordered by batches), downsampled.
struct MetricSeries {
  std::vector<int64_t> batches;
  std::vector<double> values;
  size_t total = 0;  // reports that carry the metric, before downsampling
};
MetricSeries ExtractSeries(const std::vector<MetricReport>& reports, std::string_view metric,
                           size_t max_points);

// Which reports to send when charting every metric of a trial: each metric is
// downsampled to `max_points` on its own and the picks are merged, so every
// curve keeps its shape. With `only_metric`, only reports carrying that metric
// count. Indices into `reports`, ascending.
std::vector<size_t> DownsampleReports(const std::vector<MetricReport>& reports, std::string_view only_metric,
                                      size_t max_points);

// The names of the numeric metrics found in any of the reports, sorted.
std::vector<std::string> MetricNames(const std::vector<MetricReport>& reports);

}  // namespace ring
