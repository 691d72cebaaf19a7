#include "master/observability/master_metrics.h"

#include <map>
#include <mutex>
#include <sstream>
#include <tuple>

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

namespace ring {
namespace {

using prometheus::Histogram;

// Seconds: 100 µs to 10 s.
Histogram::BucketBoundaries LatencyBuckets() {
  return {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
}

std::string StatusClass(int status) {
  return std::to_string(status / 100) + "xx";
}

}  // namespace

struct MasterMetrics::Impl {
  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
  prometheus::Family<prometheus::Counter>& requests =
      prometheus::BuildCounter()
          .Name("ringmaster_api_requests_total")
          .Help("REST requests by method, route pattern and status")
          .Register(*registry);
  prometheus::Family<Histogram>& request_seconds =
      prometheus::BuildHistogram()
          .Name("ringmaster_api_request_duration_seconds")
          .Help("REST request handling time by method, route pattern and status class")
          .Register(*registry);
  prometheus::Family<Histogram>& pass_seconds = prometheus::BuildHistogram()
                                                    .Name("ringmaster_scheduler_pass_duration_seconds")
                                                    .Help("Time of one scheduling pass of a pool")
                                                    .Register(*registry);
  Histogram& store_write = prometheus::BuildHistogram()
                               .Name("ringmaster_sqlite_write_duration_seconds")
                               .Help("Time of each SQLite write statement, COMMIT included")
                               .Register(*registry)
                               .Add({}, LatencyBuckets());
  prometheus::Counter& restarts = prometheus::BuildCounter()
                                      .Name("ringmaster_trial_restarts_total")
                                      .Help("Trials restarted after a failed allocation")
                                      .Register(*registry)
                                      .Add({});
  prometheus::Family<prometheus::Counter>& agent_refusals =
      prometheus::BuildCounter()
          .Name("ringmaster_agent_refusals_total")
          .Help("What agents (or clients posing as agents) sent that the master refused, by reason")
          .Register(*registry);
  std::map<AgentRefusal, prometheus::Counter*> refusal_counters;  // every reason, made at start
  prometheus::Family<prometheus::Gauge>& jobs = prometheus::BuildGauge()
                                                    .Name("ringmaster_jobs")
                                                    .Help("Allocations in each pool's queue, by state")
                                                    .Register(*registry);
  prometheus::Family<prometheus::Gauge>& agents =
      prometheus::BuildGauge().Name("ringmaster_agents").Help("Agents by pool and state").Register(*registry);
  prometheus::Family<prometheus::Gauge>& slots = prometheus::BuildGauge()
                                                     .Name("ringmaster_slots")
                                                     .Help("Slots of connected agents by pool and state")
                                                     .Register(*registry);
  // Gauges set at the last scrape, so ones that vanished go back to 0.
  std::mutex mu;
  std::map<std::tuple<prometheus::Family<prometheus::Gauge>*, std::string, std::string>, prometheus::Gauge*>
      gauges;

  void Set(prometheus::Family<prometheus::Gauge>& family, const std::string& pool, const std::string& state,
           double value) {
    auto& g = gauges[{&family, pool, state}];
    if (g == nullptr) g = &family.Add({{"pool", pool}, {"state", state}});
    g->Set(value);
  }
};

MasterMetrics::MasterMetrics() : impl_(std::make_unique<Impl>()) {
  for (AgentRefusal why : kAllAgentRefusals)
    impl_->refusal_counters[why] = &impl_->agent_refusals.Add({{"reason", std::string(ToString(why))}});
}

void MasterMetrics::CountAgentRefusal(AgentRefusal why) {
  impl_->refusal_counters.at(why)->Increment();
}
MasterMetrics::~MasterMetrics() = default;

void MasterMetrics::ObserveRequest(const std::string& method, const std::string& route, int status,
                                   double seconds) {
  impl_->requests.Add({{"method", method}, {"route", route}, {"code", std::to_string(status)}}).Increment();
  impl_->request_seconds
      .Add({{"method", method}, {"route", route}, {"status", StatusClass(status)}}, LatencyBuckets())
      .Observe(seconds);
}

void MasterMetrics::ObserveSchedulerPass(const std::string& pool, double seconds) {
  impl_->pass_seconds.Add({{"pool", pool}}, LatencyBuckets()).Observe(seconds);
}

void MasterMetrics::ObserveStoreWrite(double seconds) {
  impl_->store_write.Observe(seconds);
}

void MasterMetrics::CountTrialRestart() {
  impl_->restarts.Increment();
}

void MasterMetrics::SetClusterGauges(const PoolStateCounts& agents, const PoolStateCounts& slots,
                                     const nlohmann::json& jobs) {
  std::lock_guard lock(impl_->mu);
  for (auto& [key, gauge] : impl_->gauges) gauge->Set(0);
  std::map<std::pair<std::string, std::string>, int> job_counts;
  for (const auto& j : jobs) ++job_counts[{j.value("pool", ""), j.value("state", "")}];
  for (const auto& [k, n] : agents) impl_->Set(impl_->agents, k.first, k.second, static_cast<double>(n));
  for (const auto& [k, n] : slots) impl_->Set(impl_->slots, k.first, k.second, static_cast<double>(n));
  for (const auto& [k, n] : job_counts) impl_->Set(impl_->jobs, k.first, k.second, n);
}

std::string MasterMetrics::Render() const {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, impl_->registry->Collect());
  return out.str();
}

}  // namespace ring
