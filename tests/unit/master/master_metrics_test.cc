// MasterMetrics renders what it was told in the Prometheus text format, and
// cluster gauges follow the latest scrape (a pool whose agents left reads 0).
#include "master/observability/master_metrics.h"

#include <gtest/gtest.h>

namespace ring {
namespace {

bool Has(const std::string& text, const std::string& line) {
  return text.find(line + "\n") != std::string::npos;
}

TEST(MasterMetricsTest, RendersRequestsPassesWritesAndRestarts) {
  MasterMetrics m;
  m.ObserveRequest("GET", "/api/v1/trials/{id}", 200, 0.002);
  m.ObserveRequest("GET", "/api/v1/trials/{id}", 200, 0.003);
  m.ObserveRequest("POST", "/api/v1/experiments", 400, 0.001);
  m.ObserveSchedulerPass("gpu", 0.0002);
  m.ObserveStoreWrite(0.004);
  m.CountTrialRestart();
  const std::string text = m.Render();
  EXPECT_TRUE(
      Has(text, R"(ringmaster_api_requests_total{code="200",method="GET",route="/api/v1/trials/{id}"} 2)"))
      << text;
  EXPECT_TRUE(
      Has(text, R"(ringmaster_api_requests_total{code="400",method="POST",route="/api/v1/experiments"} 1)"));
  EXPECT_TRUE(Has(
      text,
      R"(ringmaster_api_request_duration_seconds_count{method="GET",route="/api/v1/trials/{id}",status="2xx"} 2)"));
  EXPECT_TRUE(Has(
      text,
      R"(ringmaster_api_request_duration_seconds_bucket{method="GET",route="/api/v1/trials/{id}",status="2xx",le="0.0025"} 1)"));
  EXPECT_TRUE(Has(text, R"(ringmaster_scheduler_pass_duration_seconds_count{pool="gpu"} 1)"));
  EXPECT_TRUE(Has(text, "ringmaster_sqlite_write_duration_seconds_count 1"));
  EXPECT_TRUE(Has(text, "ringmaster_trial_restarts_total 1"));
  EXPECT_NE(text.find("# TYPE ringmaster_api_requests_total counter"), std::string::npos);
}

TEST(MasterMetricsTest, ClusterGaugesFollowTheLatestScrape) {
  MasterMetrics m;
  MasterMetrics::PoolStateCounts agents = {{{"cpu", "connected"}, 1}, {{"cpu", "lost"}, 1}};
  MasterMetrics::PoolStateCounts slots = {{{"cpu", "used"}, 1}, {{"cpu", "free"}, 1}};
  nlohmann::json jobs = nlohmann::json::array({{{"pool", "cpu"}, {"state", "RUNNING"}},
                                               {{"pool", "cpu"}, {"state", "PENDING"}},
                                               {{"pool", "cpu"}, {"state", "PENDING"}}});
  m.SetClusterGauges(agents, slots, jobs);
  std::string text = m.Render();
  EXPECT_TRUE(Has(text, R"(ringmaster_agents{pool="cpu",state="connected"} 1)")) << text;
  EXPECT_TRUE(Has(text, R"(ringmaster_agents{pool="cpu",state="lost"} 1)"));
  EXPECT_TRUE(Has(text, R"(ringmaster_slots{pool="cpu",state="used"} 1)"));
  EXPECT_TRUE(Has(text, R"(ringmaster_slots{pool="cpu",state="free"} 1)"));
  EXPECT_TRUE(Has(text, R"(ringmaster_jobs{pool="cpu",state="PENDING"} 2)"));

  m.SetClusterGauges({}, {}, nlohmann::json::array());
  text = m.Render();
  EXPECT_TRUE(Has(text, R"(ringmaster_agents{pool="cpu",state="connected"} 0)")) << text;
  EXPECT_TRUE(Has(text, R"(ringmaster_jobs{pool="cpu",state="PENDING"} 0)"));
}

}  // namespace
}  // namespace ring
