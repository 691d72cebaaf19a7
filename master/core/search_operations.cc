// ExperimentController: searcher operations as trials see them — the next
// operation, its completion with the searcher metric, invalid hyperparameters
// — and what a trial that exited 0 has left to do.
#include <cmath>

#include <spdlog/spdlog.h>

#include "master/core/experiment_controller.h"
#include "master/core/json_fields.h"

namespace ring {
namespace {

nlohmann::json OperationJson(std::optional<int64_t> length, bool done) {
  return {{"operation", length ? nlohmann::json{{"length", *length}} : nlohmann::json()}, {"done", done}};
}

}  // namespace

Result<nlohmann::json> ExperimentController::SearcherOperation(const std::string& allocation_id,
                                                               const std::string& token,
                                                               std::optional<int64_t> after) {
  std::lock_guard lock(mu_);
  auto alloc = AuthorizeLocked(allocation_id, token);
  if (!alloc.ok()) return alloc.status();
  LiveAllocation& live = **alloc;
  const ExperimentConfig* config = ConfigLocked(live.experiment_id);
  ExperimentSearch* search = SearchLocked(live.experiment_id);
  std::optional<search::RequestId> request;
  if (search)
    if (auto it = search->request_of.find(live.record.trial_id); it != search->request_of.end())
      request = it->second;
  if (!request) {
    // A trial from before searchers were recorded: one operation to max_length.
    const int64_t length = config ? config->searcher.max_length_batches : 0;
    if (after && *after >= length) return OperationJson(std::nullopt, true);
    return OperationJson(length, false);
  }
  const auto length = search->searcher.Operation(*request);
  if (length && (!after || *length > *after)) return OperationJson(length, false);
  if (length) return OperationJson(std::nullopt, false);  // its completion has not arrived yet
  live.told_done = true;
  return OperationJson(std::nullopt, true);
}

Result<bool> ExperimentController::CompleteSearcherOperation(const std::string& allocation_id,
                                                             const std::string& token,
                                                             const nlohmann::json& body) {
  if (!body.is_object()) return InvalidArgument("body must be an object {\"length\": N, \"metric\": value}");
  if (Status s = CheckKnownFields(body, {"length", "metric"}, "the request body"); !s.ok()) return s;
  if (!body.contains("length") || !body["length"].is_number_integer() || body["length"].get<int64_t>() < 1)
    return InvalidArgument("length must be a positive integer (the operation's batches)");
  if (!body.contains("metric") || !body["metric"].is_number() || !std::isfinite(body["metric"].get<double>()))
    return InvalidArgument("metric must be a finite number (the searcher metric)");
  const int64_t length = body["length"].get<int64_t>();
  const double metric = body["metric"].get<double>();

  std::lock_guard lock(mu_);
  auto alloc = AuthorizeLocked(allocation_id, token);
  if (!alloc.ok()) return alloc.status();
  const LiveAllocation& live = **alloc;
  ExperimentSearch* search = SearchLocked(live.experiment_id);
  if (!search) return false;
  auto request = search->request_of.find(live.record.trial_id);
  if (request == search->request_of.end() || search->searcher.Operation(request->second) != length)
    return false;
  spdlog::info("[searcher] trial {} completed its operation to {} batches: {} {}", live.record.trial_id,
               length, ConfigLocked(live.experiment_id)->searcher.metric, metric);
  const auto id = request->second;
  SearchEventLocked(live.experiment_id, [id, metric, length](search::Searcher& s) {
    return s.ValidationCompleted(id, metric, length);
  });
  ScheduleLocked();
  return true;
}

Status ExperimentController::ReportInvalidHparams(const std::string& allocation_id, const std::string& token,
                                                  const nlohmann::json& body) {
  if (!body.is_object() || (body.contains("message") && !body["message"].is_string()))
    return InvalidArgument("body must be an object {\"message\": \"what is wrong\"}");
  if (Status s = CheckKnownFields(body, {"message"}, "the request body"); !s.ok()) return s;
  std::string message = body.value("message", "");
  if (message.size() > 4096) message.resize(4096);
  if (message.empty()) message = "no reason given";
  std::lock_guard lock(mu_);
  auto alloc = AuthorizeLocked(allocation_id, token);
  if (!alloc.ok()) return alloc.status();
  (*alloc)->invalid_hparams = message;
  spdlog::warn("[searcher] trial {} reports invalid hyperparameters: {}", (*alloc)->record.trial_id, message);
  return Status::Ok();
}

std::optional<int64_t> ExperimentController::TrialOperation(int64_t experiment_id, int64_t trial_id) {
  std::lock_guard lock(mu_);
  ExperimentSearch* search = SearchLocked(experiment_id);
  if (!search) return std::nullopt;
  auto request = search->request_of.find(trial_id);
  if (request == search->request_of.end()) return std::nullopt;
  return search->searcher.Operation(request->second);
}

std::optional<double> ExperimentController::StoredSearcherMetricLocked(int64_t trial_id, int64_t length,
                                                                       const ExperimentConfig& config) {
  auto metrics = store_.GetMetrics(trial_id, "validation");
  if (!metrics.ok()) return std::nullopt;
  for (const auto& m : *metrics) {
    if (m.batches != length) continue;
    auto values = nlohmann::json::parse(m.metrics_json, nullptr, false);
    if (!values.is_object()) continue;
    auto v = values.find(config.searcher.metric);
    if (v != values.end() && v->is_number() && std::isfinite(v->get<double>())) return v->get<double>();
  }
  return std::nullopt;
}

ExperimentController::FinishedTrial ExperimentController::OnTrialFinishedLocked(const TrialRecord& trial,
                                                                                const LiveAllocation& alloc) {
  const ExperimentConfig* config = ConfigLocked(alloc.experiment_id);
  ExperimentSearch* search = SearchLocked(alloc.experiment_id);
  if (!search || !config) return FinishedTrial::kCompleted;
  auto request = search->request_of.find(trial.id);
  if (request == search->request_of.end()) return FinishedTrial::kCompleted;
  const auto id = request->second;
  auto length = search->searcher.Operation(id);
  if (length && !alloc.told_done) {
    // It never asked for operations (a plain training loop): its validation
    // at the operation's length completes the operation.
    auto metric = StoredSearcherMetricLocked(trial.id, *length, *config);
    if (!metric) return FinishedTrial::kExitedEarly;
    const auto at = *length;
    SearchEventLocked(alloc.experiment_id, [id, m = *metric, at](search::Searcher& s) {
      return s.ValidationCompleted(id, m, at);
    });
    search = SearchLocked(alloc.experiment_id);
    if (!search) return FinishedTrial::kWaiting;
    length = search->searcher.Operation(id);
  }
  if (length) return FinishedTrial::kRequeue;  // promoted after it was told it had nothing to do
  if (search->searcher.Closed(id)) return FinishedTrial::kCompleted;
  return FinishedTrial::kWaiting;
}

}  // namespace ring
