// The routes the web UI reads, through the router on the in-memory store:
// downsampled trial metrics, one metric of every trial of an experiment,
// pools, and the experiments list's filters, sorting and config summary.
#include <gtest/gtest.h>

#include <utility>  // before Asio

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include "master/api/routes.h"
#include "master/auth/accounts.h"
#include "tests/unit/lifecycle/lifecycle_test_fixture.h"

namespace ring {
namespace {

namespace net = boost::asio;

std::string GridConfig(const std::string& name, const std::string& labels) {
  return "name: " + name + R"(
entrypoint: sh run.sh
labels: [)" +
         labels + R"(]
hyperparameters:
  lr:
    type: categorical
    vals: [0.1, 0.2, 0.3]
searcher:
  name: grid
  metric: validation_loss
  max_length:
    batches: 100
)";
}

class WebUiApiTest : public testing::LifecycleFixture {
 protected:
  void SetUp() override {
    LifecycleFixture::SetUp();
    // A real admin signs in; its token goes with every request.
    auto password = accounts_.EnsureAdmin("");
    ASSERT_TRUE(password.ok() && *password);
    auto login = accounts_.Login("admin", **password, "127.0.0.1");
    ASSERT_TRUE(login.ok()) << login.status().message();
    token_ = login->token;
    RegisterAuthRoutes(router_, ctx_);
    RegisterExperimentRoutes(router_, ctx_);
    RegisterMetricRoutes(router_, ctx_);
    RegisterPoolRoutes(router_, ctx_);
  }

  nlohmann::json Get(const std::string& path, std::map<std::string, std::string> query = {},
                     int* status = nullptr) {
    ApiRequest req;
    req.method = "GET";
    req.path = path;
    req.query = std::move(query);
    req.headers["authorization"] = "Bearer " + token_;
    net::io_context io;
    auto done = net::co_spawn(
        io, [&]() -> net::awaitable<ApiResponse> { co_return co_await router_.Dispatch(req); },
        net::use_future);
    io.run();
    ApiResponse res = done.get();
    if (status) *status = res.status;
    return nlohmann::json::parse(res.body);
  }

  std::vector<int64_t> TrialIds(int64_t experiment_id) {
    std::vector<int64_t> ids;
    auto trials = store_.ListTrials(experiment_id);
    EXPECT_TRUE(trials.ok());
    if (trials.ok())
      for (const auto& t : *trials) ids.push_back(t.id);
    return ids;
  }

  void AddMetrics(int64_t trial_id, MetricKind kind, int64_t count,
                  const std::function<nlohmann::json(int64_t)>& metrics) {
    std::vector<MetricReport> reports;
    for (int64_t b = 1; b <= count; ++b) {
      MetricReport r;
      r.trial_id = trial_id;
      r.kind = kind;
      r.batches = b;
      r.metrics_json = metrics(b).dump();
      reports.push_back(std::move(r));
    }
    ASSERT_TRUE(store_.AddMetrics(reports).ok());
  }

  Accounts accounts_{store_};
  std::string token_;
  Router router_;
  ApiContext ctx_{store_, controller_.lifecycle(), controller_.agents(), "test", &accounts_};
};

TEST_F(WebUiApiTest, TrialMetricsAreDownsampledOnRequest) {
  const int64_t exp = CreateFrom(GridConfig("g", ""));
  const int64_t trial = TrialIds(exp).front();
  AddMetrics(trial, MetricKind::kTraining, 5000, [](int64_t b) {
    return nlohmann::json{{"loss", 1.0 / static_cast<double>(b)}, {"acc", b == 2500 ? 9.0 : 0.5}};
  });
  const std::string path = "/api/v1/trials/" + std::to_string(trial) + "/metrics";

  auto all = Get(path);
  EXPECT_EQ(all["metrics"].size(), 5000u);
  EXPECT_EQ(all["total"], 5000);
  EXPECT_EQ(all["downsampled"], false);

  auto some = Get(path, {{"kind", "training"}, {"max_points", "100"}});
  EXPECT_LE(some["metrics"].size(), 200u);
  EXPECT_GE(some["metrics"].size(), 100u);
  EXPECT_EQ(some["total"], 5000);
  EXPECT_EQ(some["downsampled"], true);
  EXPECT_EQ(some["metrics"].front()["batches"], 1);
  EXPECT_EQ(some["metrics"].back()["batches"], 5000);
  bool spike = false;
  for (const auto& m : some["metrics"]) spike = spike || m["batches"] == 2500;
  EXPECT_TRUE(spike) << "the acc spike at batch 2500 was dropped";

  auto one = Get(path, {{"metric", "loss"}, {"max_points", "50"}});
  ASSERT_EQ(one["metrics"].size(), 50u);
  for (const auto& m : one["metrics"]) EXPECT_EQ(m["metrics"].size(), 1u);
  EXPECT_EQ(one["metrics"][0]["metrics"]["loss"], 1.0);

  int status = 0;
  Get(path, {{"max_points", "1"}}, &status);
  EXPECT_EQ(status, 400);
  auto bad_kind = Get(path, {{"kind", "test"}}, &status);
  EXPECT_EQ(status, 400);
  EXPECT_NE(bad_kind["error"]["message"].get<std::string>().find("kind"), std::string::npos);
  Get("/api/v1/trials/999/metrics", {}, &status);
  EXPECT_EQ(status, 404);

  // New reports show at once, and so do those thinned by retention.
  AddMetrics(trial, MetricKind::kTraining, 5001, [](int64_t) { return nlohmann::json{{"loss", 0.0}}; });
  EXPECT_EQ(Get(path)["total"], 5001);
  ASSERT_TRUE(store_.DeleteMetrics(trial, MetricKind::kTraining, {1, 2, 3}).ok());
  EXPECT_EQ(Get(path)["total"], 4998);
  const std::string chart = "/api/v1/experiments/" + std::to_string(exp) + "/metrics";
  EXPECT_EQ(Get(chart, {{"kind", "training"}, {"metric", "loss"}})["series"][0]["total"], 4998);
  ASSERT_TRUE(store_.DeleteMetrics(trial, MetricKind::kTraining, {4}).ok());
  EXPECT_EQ(Get(chart, {{"kind", "training"}, {"metric", "loss"}})["series"][0]["total"], 4997);
}

TEST_F(WebUiApiTest, ExperimentMetricsHaveOneSeriesPerTrial) {
  const int64_t exp = CreateFrom(GridConfig("g", ""));
  const auto trials = TrialIds(exp);
  ASSERT_EQ(trials.size(), 3u);
  for (size_t i = 0; i < trials.size(); ++i) {
    AddMetrics(trials[i], MetricKind::kValidation, 10 * static_cast<int64_t>(i + 1), [i](int64_t b) {
      return nlohmann::json{{"validation_loss", static_cast<double>(i) + 1.0 / static_cast<double>(b)},
                            {"accuracy", 0.1 * static_cast<double>(i)}};
    });
    AddMetrics(trials[i], MetricKind::kTraining, 3000, [](int64_t b) {
      return nlohmann::json{{"loss", b % 7}};
    });
  }
  const std::string path = "/api/v1/experiments/" + std::to_string(exp) + "/metrics";

  auto v = Get(path);
  EXPECT_EQ(v["kind"], "validation");
  EXPECT_EQ(v["metric"], "validation_loss");
  EXPECT_EQ(v["metric_names"], nlohmann::json::array({"accuracy", "validation_loss"}));
  ASSERT_EQ(v["series"].size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    const auto& s = v["series"][i];
    EXPECT_EQ(s["trial_id"], trials[i]);
    EXPECT_EQ(s["total"], 10 * (i + 1));
    EXPECT_EQ(s["batches"].size(), 10 * (i + 1));
    EXPECT_EQ(s["values"].size(), s["batches"].size());
  }

  auto acc = Get(path, {{"metric", "accuracy"}});
  EXPECT_EQ(acc["series"][2]["values"][0], 0.2);

  auto training = Get(path, {{"kind", "training"}, {"max_points", "300"}});
  EXPECT_EQ(training["metric"], "loss");
  EXPECT_EQ(training["series"][0]["total"], 3000);
  EXPECT_EQ(training["series"][0]["batches"].size(), 300u);

  int status = 0;
  Get("/api/v1/experiments/77/metrics", {}, &status);
  EXPECT_EQ(status, 404);
}

TEST_F(WebUiApiTest, PoolsCountAgentsSlotsAndJobs) {
  auto channel = Connect("agent-1", 2);
  CreateFrom(GridConfig("g", ""));  // three one-slot trials: two run, one waits
  auto pools = Get("/api/v1/pools");
  ASSERT_EQ(pools["total"], 1);
  const auto& p = pools["pools"][0];
  EXPECT_EQ(p["name"], "default");
  EXPECT_EQ(p["configured"], true);
  EXPECT_EQ(p["scheduler"], "priority");
  EXPECT_EQ(p["agents"], 1);
  EXPECT_EQ(p["agents_connected"], 1);
  EXPECT_EQ(p["slots"], 2);
  EXPECT_EQ(p["slots_used"], 2);
  EXPECT_EQ(p["jobs_running"], 2);
  EXPECT_EQ(p["jobs_pending"], 1);
}

TEST_F(WebUiApiTest, ExperimentsListFiltersSortsAndSummarizes) {
  CreateFrom(GridConfig("vision-a", "vision"));
  const int64_t b = CreateFrom(GridConfig("nlp-b", "nlp, baseline"));
  CreateFrom(GridConfig("vision-c", "vision"));
  ASSERT_TRUE(controller_.Pause(b).ok());

  auto all = Get("/api/v1/experiments", {{"sort", "name"}, {"order", "desc"}});
  EXPECT_EQ(all["total"], 3);
  EXPECT_EQ(all["experiments"][0]["name"], "vision-c");
  EXPECT_EQ(all["experiments"][2]["name"], "nlp-b");
  EXPECT_EQ(all["facets"]["labels"], nlohmann::json::array({"baseline", "nlp", "vision"}));
  EXPECT_EQ(all["facets"]["owners"], nlohmann::json::array({"alice"}));
  const auto& first = all["experiments"][0];
  EXPECT_EQ(first["labels"], nlohmann::json::array({"vision"}));
  EXPECT_EQ(first["searcher"]["metric"], "validation_loss");
  EXPECT_EQ(first["searcher"]["name"], "grid");
  EXPECT_EQ(first["num_trials"], 3);

  auto vision = Get("/api/v1/experiments", {{"label", "vision"}, {"limit", "1"}, {"offset", "1"}});
  EXPECT_EQ(vision["total"], 2);
  ASSERT_EQ(vision["experiments"].size(), 1u);
  EXPECT_EQ(vision["experiments"][0]["name"], "vision-c");

  auto paused = Get("/api/v1/experiments", {{"state", "PAUSED"}});
  ASSERT_EQ(paused["total"], 1);
  EXPECT_EQ(paused["experiments"][0]["id"], b);

  auto detail = Get("/api/v1/experiments/" + std::to_string(b));
  EXPECT_EQ(detail["labels"], nlohmann::json::array({"nlp", "baseline"}));
  EXPECT_EQ(detail["searcher"]["smaller_is_better"], true);

  int status = 0;
  auto bad = Get("/api/v1/experiments", {{"sort", "colour"}}, &status);
  EXPECT_EQ(status, 400);
  EXPECT_NE(bad["error"]["message"].get<std::string>().find("sort"), std::string::npos);
}

TEST_F(WebUiApiTest, TheExperimentsListIsNeverStaleAfterAChange) {
  const int64_t a = CreateFrom(GridConfig("first", "vision"));
  auto before = Get("/api/v1/experiments");
  EXPECT_EQ(Get("/api/v1/experiments"), before) << "the same answer while nothing changes";
  ASSERT_EQ(before["total"], 1);

  const int64_t b = CreateFrom(GridConfig("second", "nlp"));
  auto created = Get("/api/v1/experiments");
  ASSERT_EQ(created["total"], 2);
  EXPECT_EQ(created["experiments"][1]["id"], b);

  ASSERT_TRUE(controller_.Pause(a).ok());
  EXPECT_EQ(Get("/api/v1/experiments")["experiments"][0]["state"], "PAUSED");

  auto record = store_.GetExperiment(b);
  ASSERT_TRUE(record.ok());
  record->progress = 0.5;
  ASSERT_TRUE(store_.UpdateExperiment(*record).ok());
  EXPECT_EQ(Get("/api/v1/experiments")["experiments"][1]["progress"], 0.5);

  TrialRecord extra;
  extra.experiment_id = b;
  ASSERT_TRUE(store_.CreateTrial(extra).ok());
  EXPECT_EQ(Get("/api/v1/experiments")["experiments"][1]["num_trials"], 4);
  EXPECT_EQ(Get("/api/v1/experiments", {{"label", "nlp"}})["total"], 1) << "each query has its own answer";
}

}  // namespace
}  // namespace ring
