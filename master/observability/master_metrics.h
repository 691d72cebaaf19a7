#pragma once
// The master's Prometheus metrics (prometheus-cpp), served at GET /metrics in
// the text format: API requests by method, route pattern and status, the
// scheduling pass time per pool, SQLite write latency, trial restarts, what
// agents sent that was refused (by reason), and
// gauges of the job queue, agents and slots read from the controller when
// scraped. Only counts and timings: no names, ids or secrets. Thread-safe.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "master/rm/agentrm/agent_refusal.h"

namespace ring {

class MasterMetrics {
 public:
  MasterMetrics();
  ~MasterMetrics();
  MasterMetrics(const MasterMetrics&) = delete;
  MasterMetrics& operator=(const MasterMetrics&) = delete;

  void ObserveRequest(const std::string& method, const std::string& route, int status, double seconds);
  void ObserveSchedulerPass(const std::string& pool, double seconds);
  void ObserveStoreWrite(double seconds);
  void CountTrialRestart();
  // ringmaster_agent_refusals_total{reason}: one series per AgentRefusal,
  // all present from the start (at 0).
  void CountAgentRefusal(AgentRefusal why);
  // Counts by (pool, state): agents by their state, connected agents'
  // slots as "used" or "free".
  using PoolStateCounts = std::map<std::pair<std::string, std::string>, int64_t>;
  // Sets the gauges from the agents and slots counted and the jobs
  // (JobsJson(): [{pool, state}]); what is not counted now reads 0.
  void SetClusterGauges(const PoolStateCounts& agents, const PoolStateCounts& slots,
                        const nlohmann::json& jobs);
  // Everything in the Prometheus text exposition format.
  std::string Render() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ring
