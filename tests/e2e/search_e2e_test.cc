// Hyperparameter searches on a real cluster (a master, two agents with two CPU
// slots each, the real quadratic trial): the example configs of every
// searcher complete, adaptive ASHA finds a learning rate near the best one
// while training under half the batches of a full search, and a search
// survives kill -9 of its master without creating a trial twice.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "tests/support/test_cluster.h"

namespace ring::testing::search_e2e {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string QuadraticModel() {
  return BinDir() + "/../examples/quadratic/model";
}

class SearchE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_.StartMaster();
    cluster_.StartAgent("agent-1", 2);
    cluster_.StartAgent("agent-2", 2);
  }
  void TearDown() override {
    if (HasFailure()) cluster_.DumpLogs();
  }

  // Submits and waits for the experiment to end; returns its id.
  int64_t Run(const std::string& config) {
    auto created = cluster_.Ring({"--json", "experiment", "create", config, QuadraticModel()});
    EXPECT_EQ(created.exit_code, 0) << created.out << created.err;
    const int64_t id = nlohmann::json::parse(created.out, nullptr, false).value("id", int64_t{0});
    auto waited = cluster_.Ring({"experiment", "wait", std::to_string(id)});
    EXPECT_EQ(waited.exit_code, 0) << waited.out << waited.err;
    return id;
  }

  nlohmann::json Trials(int64_t experiment) {
    return cluster_.GetJson("/api/v1/experiments/" + std::to_string(experiment) + "/trials")["trials"];
  }

  TestCluster cluster_;
};

// The final validation loss of the quadratic trial run alone (local mode)
// with this seed and learning rate, the way the search ran it.
double LocalValidationLoss(uint64_t seed, double learning_rate, int64_t batches, const std::string& dir) {
  std::ostringstream lr;
  lr.precision(17);
  lr << learning_rate;
  auto run = RunCommand({BinDir() + "/quadratic_trial", "--hparam", "learning_rate=" + lr.str(), "--hparam",
                         "batch_size=32", "--hparam", "report_every=25", "--hparam", "checkpoint_every=0",
                         "--batches", std::to_string(batches), "--seed", std::to_string(seed),
                         "--checkpoint-dir", dir});
  if (run.exit_code != 0) return INFINITY;  // diverged
  const auto at = run.out.rfind("validation_loss=");
  return at == std::string::npos ? INFINITY : std::stod(run.out.substr(at + 16));
}

TEST_F(SearchE2E, AdaptiveAshaFindsANearOptimalLearningRateWithUnderHalfTheBatches) {
  const int64_t exp_id = Run(SourceDir() + "/configs/experiments/quadratic-asha.yaml");
  auto exp = cluster_.GetJson("/api/v1/experiments/" + std::to_string(exp_id));
  ASSERT_EQ(exp["state"], "COMPLETED") << exp.dump();
  EXPECT_DOUBLE_EQ(exp["progress"].get<double>(), 1.0);

  auto trials = Trials(exp_id);
  ASSERT_EQ(trials.size(), 16u);
  int64_t total_batches = 0;
  std::set<int64_t> lengths;
  for (const auto& t : trials) {
    EXPECT_EQ(t["state"], "COMPLETED") << t.dump();
    total_batches += t["total_batches"].get<int64_t>();
    lengths.insert(t["total_batches"].get<int64_t>());
  }
  EXPECT_LT(total_batches, 16 * 800 / 2);
  EXPECT_TRUE(lengths.count(50)) << "some trials stop at the first rung";
  EXPECT_TRUE(lengths.count(800)) << "some trial trains to max_length";

  // The best trial trained to max_length, and its learning rate is near the
  // best one for its data: brute force over the searched range, run alone.
  const auto best = cluster_.GetJson("/api/v1/trials/" + std::to_string(exp["best_trial_id"].get<int64_t>()));
  ASSERT_EQ(best["total_batches"], 800) << best.dump();
  const double best_lr = best["hparams"]["learning_rate"].get<double>();
  const uint64_t seed = best["seed"].get<uint64_t>();
  const std::string scratch = cluster_.dir() + "/brute";
  std::vector<std::pair<double, double>> curve;  // learning rate, loss
  double optimum = INFINITY;
  for (int i = 0; i <= 32; ++i) {
    const double lr = std::pow(10.0, -3.5 + 3.2 * i / 32);
    curve.emplace_back(lr, LocalValidationLoss(seed, lr, 800, scratch));
    optimum = std::min(optimum, curve.back().second);
  }
  ASSERT_TRUE(std::isfinite(optimum));
  const double found = LocalValidationLoss(seed, best_lr, 800, scratch);
  EXPECT_LE(found, optimum * 1.25) << "best learning rate " << best_lr;
  double low = INFINITY, high = 0;  // the learning rates within 25% of the optimum
  for (const auto& [lr, loss] : curve)
    if (loss <= optimum * 1.25) low = std::min(low, lr), high = std::max(high, lr);
  EXPECT_GE(best_lr, low / 1.3);
  EXPECT_LE(best_lr, high * 1.3);

  auto validations = cluster_.GetJson("/api/v1/trials/" + std::to_string(best["id"].get<int64_t>()) +
                                      "/metrics?kind=validation")["metrics"];
  std::set<int64_t> at;
  for (const auto& v : validations) {
    at.insert(v["batches"].get<int64_t>());
    if (v["batches"] == 800) {  // the search ran what runs alone (printed with 6 digits)
      EXPECT_NEAR(v["metrics"]["validation_loss"].get<double>(), found, found * 1e-4);
    }
  }
  // Its bracket's rungs: 50, 200 and 800 batches, or 200 and 800 in the bracket that starts later.
  EXPECT_TRUE(at.count(200) && at.count(800)) << validations.dump();
}

TEST_F(SearchE2E, GridAndRandomExamplesComplete) {
  const int64_t grid = Run(SourceDir() + "/configs/experiments/quadratic-grid.yaml");
  EXPECT_EQ(cluster_.GetJson("/api/v1/experiments/" + std::to_string(grid))["state"], "COMPLETED");
  std::set<std::string> points;
  for (const auto& t : Trials(grid)) {
    EXPECT_EQ(t["state"], "COMPLETED");
    EXPECT_EQ(t["total_batches"], 300);
    points.insert(t["hparams"].dump());
  }
  EXPECT_EQ(points.size(), 8u);  // 4 learning rates x 2 batch sizes, each once

  const int64_t random = Run(SourceDir() + "/configs/experiments/quadratic-random.yaml");
  auto exp = cluster_.GetJson("/api/v1/experiments/" + std::to_string(random));
  EXPECT_EQ(exp["state"], "COMPLETED");
  auto trials = Trials(random);
  ASSERT_EQ(trials.size(), 8u);
  std::set<double> rates;
  for (const auto& t : trials) {
    rates.insert(t["hparams"]["learning_rate"].get<double>());
    EXPECT_EQ(t["state"], "COMPLETED");
  }
  EXPECT_EQ(rates.size(), 8u);
  EXPECT_FALSE(exp["best_trial_id"].is_null());
}

TEST_F(SearchE2E, SearchSurvivesKillOfItsMasterWithoutDuplicateTrials) {
  std::ifstream in(SourceDir() + "/configs/experiments/quadratic-random.yaml");
  std::stringstream text;
  text << in.rdbuf();
  std::string config = text.str();
  config.replace(config.find("  checkpoint_every: 100"), 0, "  batch_sleep_ms: 4\n");
  const std::string path = cluster_.WriteFile("random-slow.yaml", config);
  auto created = cluster_.Ring({"--json", "experiment", "create", path, QuadraticModel()});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Trials(1).size() >= 5; }, 60s)) << Trials(1).dump();

  cluster_.KillMaster();
  cluster_.StartMaster();
  auto waited = cluster_.Ring({"experiment", "wait", "1"});
  ASSERT_EQ(waited.exit_code, 0) << waited.out << waited.err;
  auto trials = Trials(1);
  ASSERT_EQ(trials.size(), 8u) << trials.dump();
  std::set<int64_t> requests;
  for (const auto& t : trials) {
    EXPECT_EQ(t["state"], "COMPLETED") << t.dump();
    EXPECT_EQ(t["total_batches"], 300);
    requests.insert(t["request_id"].get<int64_t>());
  }
  EXPECT_EQ(requests, (std::set<int64_t>{1, 2, 3, 4, 5, 6, 7, 8}));
}

}  // namespace
}  // namespace ring::testing::search_e2e
