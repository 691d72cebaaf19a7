// Metrics for charts: one trial's reports, optionally narrowed to one metric
// and downsampled (LTTB, metric_series.h), and one metric of every trial of an
// experiment as columns, so a chart of all trials is one request.
#include <algorithm>
#include <memory>

#include "master/api/experiment_query.h"
#include "master/api/json_views.h"
#include "master/api/response_cache.h"
#include "master/api/routes.h"
#include "master/queries/metric_series.h"
#include "master/store/store.h"

namespace ring {
namespace {

constexpr int64_t kMaxPointsLimit = 100000;

Result<MetricKind> Kind(const ApiRequest& req, MetricKind fallback) {
  auto it = req.query.find("kind");
  if (it == req.query.end() || it->second.empty()) return fallback;
  if (auto kind = ParseMetricKind(it->second)) return *kind;
  return InvalidArgument("query parameter kind must be training or validation, got \"" +
                         it->second.substr(0, 64) + "\"");
}

std::string QueryString(const ApiRequest& req, const std::string& name) {
  auto it = req.query.find(name);
  return it == req.query.end() ? std::string() : it->second;
}

// GET /trials/{id}/metrics?kind=&metric=&max_points=
ApiResponse GetTrialMetrics(ApiContext& ctx, ApiRequest& req) {
  auto id = ParseId(req.params[0], "trial id");
  if (!id.ok()) return ApiResponse::Error(id.status());
  auto kind = Kind(req, MetricKind::kTraining);
  if (!kind.ok()) return ApiResponse::Error(kind.status());
  auto max_points = QueryInt(req, "max_points", 0, 2, kMaxPointsLimit);
  if (!max_points.ok()) return ApiResponse::Error(max_points.status());
  const std::string metric = QueryString(req, "metric");
  if (auto trial = ctx.store.GetTrial(*id); !trial.ok()) return ApiResponse::Error(trial.status());
  auto metrics = ctx.store.GetMetrics(*id, *kind);
  if (!metrics.ok()) return ApiResponse::Error(metrics.status());

  nlohmann::json list = nlohmann::json::array();
  size_t total = metrics->size();
  bool downsampled = false;
  if (metric.empty() && (*max_points == 0 || metrics->size() <= static_cast<size_t>(*max_points))) {
    for (const auto& m : *metrics) list.push_back(MetricJson(m));
  } else if (metric.empty()) {
    const auto picks = DownsampleReports(*metrics, "", static_cast<size_t>(*max_points));
    downsampled = picks.size() < metrics->size();
    for (size_t i : picks) list.push_back(MetricJson((*metrics)[i]));
  } else {
    // Only the reports that carry the metric, each with that metric alone.
    const auto series = ExtractSeries(
        *metrics, metric, *max_points == 0 ? metrics->size() + 2 : static_cast<size_t>(*max_points));
    total = series.total;
    downsampled = series.batches.size() < series.total;
    for (size_t i = 0; i < series.batches.size(); ++i)
      list.push_back({{"batches", series.batches[i]}, {"metrics", {{metric, series.values[i]}}}});
  }
  return ApiResponse::Json({{"metrics", std::move(list)}, {"total", total}, {"downsampled", downsampled}});
}

// GET /experiments/{id}/metrics?kind=&metric=&max_points=: one metric of every
// trial as columns; the metric defaults to the searcher's when the trials
// report it, else to the first name in order.
ApiResponse GetExperimentMetrics(ApiContext& ctx, ApiRequest& req) {
  auto id = ParseId(req.params[0], "experiment id");
  if (!id.ok()) return ApiResponse::Error(id.status());
  auto kind = Kind(req, MetricKind::kValidation);
  if (!kind.ok()) return ApiResponse::Error(kind.status());
  auto max_points = QueryInt(req, "max_points", 1000, 2, kMaxPointsLimit);
  if (!max_points.ok()) return ApiResponse::Error(max_points.status());
  auto exp = ctx.store.GetExperiment(*id);
  if (!exp.ok()) return ApiResponse::Error(exp.status());
  auto trials = ctx.store.ListTrials(*id);
  if (!trials.ok()) return ApiResponse::Error(trials.status());

  std::vector<std::vector<MetricReport>> reports;
  std::vector<std::string> names;
  for (const auto& t : *trials) {
    auto m = ctx.store.GetMetrics(t.id, *kind);
    if (!m.ok()) return ApiResponse::Error(m.status());
    for (auto& n : MetricNames(*m))
      if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(std::move(n));
    reports.push_back(std::move(m).value());
  }
  std::sort(names.begin(), names.end());
  std::string metric = QueryString(req, "metric");
  if (metric.empty()) {
    const std::string searcher_metric = SummarizeConfig(exp->config_yaml).metric;
    if (std::find(names.begin(), names.end(), searcher_metric) != names.end())
      metric = searcher_metric;
    else if (!names.empty())
      metric = names.front();
  }
  nlohmann::json series = nlohmann::json::array();
  for (size_t i = 0; i < trials->size(); ++i) {
    auto s = ExtractSeries(reports[i], metric, static_cast<size_t>(*max_points));
    series.push_back({{"trial_id", (*trials)[i].id},
                      {"batches", std::move(s.batches)},
                      {"values", std::move(s.values)},
                      {"total", s.total}});
  }
  return ApiResponse::Json({{"kind", ToString(*kind)},
                            {"metric", metric.empty() ? nlohmann::json() : nlohmann::json(metric)},
                            {"metric_names", names},
                            {"series", std::move(series)}});
}

}  // namespace

void RegisterMetricRoutes(Router& router, ApiContext& ctx) {
  // Both answers depend on metrics and on the experiment's trials.
  auto generation = [&ctx] { return ctx.store.MetricsGeneration() + ctx.store.ExperimentsGeneration(); };
  auto cache = std::make_shared<ResponseCache>();
  router.AddSync(
      "GET", "/api/v1/trials/{id}/metrics", Access::kUser, [&ctx, cache, generation](ApiRequest& r) {
        // The reading rule first: the cache is shared by every user
        // (an unknown id is the handler's to report, after its query).
        if (auto id = ParseId(r.params[0], "trial id"); id.ok())
          if (Status s = CheckTrialReads(ctx, r, *id, "metrics"); s.code() == ErrorCode::kPermissionDenied)
            return ApiResponse::Error(s);
        return cache->Answer(generation, "trial " + r.params[0] + "?" + QueryKey(r),
                             [&] { return GetTrialMetrics(ctx, r); });
      });
  router.AddSync(
      "GET", "/api/v1/experiments/{id}/metrics", Access::kUser, [&ctx, cache, generation](ApiRequest& r) {
        if (auto id = ParseId(r.params[0], "experiment id"); id.ok())
          if (Status s = CheckReads(ctx, r, *id, "metrics"); s.code() == ErrorCode::kPermissionDenied)
            return ApiResponse::Error(s);
        return cache->Answer(generation, "experiment " + r.params[0] + "?" + QueryKey(r),
                             [&] { return GetExperimentMetrics(ctx, r); });
      });
}

}  // namespace ring
