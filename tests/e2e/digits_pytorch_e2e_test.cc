// The digits-pytorch example (a plain PyTorch DDP script reporting through
// the ringtrial Python module) on a real cluster: a master and two agents
// with one CPU slot each, so the trial's two ranks run under different agents
// and set up torch's Gloo process group from MASTER_ADDR and MASTER_PORT. The
// example config completes with at least 95% validation accuracy over all
// 300 validation images, metrics stored once and checkpoints registered; a
// trial paused after its first checkpoint stops on both ranks and, activated
// again, ends with exactly the parameters and metrics of an uninterrupted run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <string>

#include "tests/support/python_torch.h"
#include "tests/support/test_cluster.h"

namespace ring::testing::digits_pytorch_e2e {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr const char* kData = "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz";

std::string ModelDir() {
  return BinDir() + "/../examples/digits-pytorch/model";
}

bool ModelHasModule() {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(ModelDir(), ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("ringtrial.", 0) == 0 && name.size() > 3 && name.substr(name.size() - 3) == ".so")
      return true;
  }
  return false;
}

// Why the example cannot run in this build or on this machine; empty when it can.
std::string WhyNotRunnable() {
  if (!PythonHasTorch())
    return "/usr/bin/python3 cannot import torch with Gloo (install python3-torch to run this test)";
  if (!fs::exists(kData))
    return std::string(kData) + " is missing (install python3-sklearn to run this test)";
  if (!ModelHasModule())
    return "the ringtrial Python module was not built (CMake needs pybind11-dev and python3-dev for "
           "/usr/bin/python3), so " +
           ModelDir() + " holds no model folder";
  return "";
}

// batches -> metrics of metric records.
std::map<int64_t, nlohmann::json> Values(const nlohmann::json& records) {
  std::map<int64_t, nlohmann::json> values;
  for (const auto& r : records) values[r["batches"].get<int64_t>()] = r["metrics"];
  return values;
}

// What a finished trial left: its metrics and what each rank printed.
struct Outcome {
  int64_t trial = 0;
  int64_t length = 0;
  nlohmann::json validation;           // metrics?kind=validation
  nlohmann::json training;             // metrics?kind=training
  std::set<int> joined;                // ranks that printed "rank R of 2 (gloo)"
  std::map<int, std::string> digests;  // rank -> its parameter digest at the end
  std::set<int> stopped;               // ranks that printed "asked to stop"
};

class DigitsPytorchE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = WhyNotRunnable(); !why.empty()) GTEST_SKIP() << why;
    // Keep the ranks' traffic on loopback even where the host name resolves to
    // another interface (agents and their trials inherit this environment).
    if (!HostnameIsLoopback()) setenv("GLOO_SOCKET_IFNAME", "lo", 1);
    cluster_.StartMaster();
    cluster_.StartAgent("agent-1", 1);
    cluster_.StartAgent("agent-2", 1);
  }

  void TearDown() override {
    if (HasFailure()) cluster_.DumpLogs();
  }

  int64_t Submit(const std::string& config) {
    auto created = cluster_.Ring({"--json", "experiment", "create", config, ModelDir()});
    EXPECT_EQ(created.exit_code, 0) << created.out << created.err;
    return nlohmann::json::parse(created.out, nullptr, false).value("id", int64_t{0});
  }

  void WaitCompleted(int64_t exp) {
    auto waited = cluster_.Ring({"experiment", "wait", std::to_string(exp)});
    ASSERT_EQ(waited.exit_code, 0) << waited.out << waited.err;
    auto state = cluster_.GetJson("/api/v1/experiments/" + std::to_string(exp));
    EXPECT_EQ(state["state"], "COMPLETED") << state.dump();
  }

  int64_t TrialOf(int64_t exp) {
    auto trials = cluster_.GetJson("/api/v1/experiments/" + std::to_string(exp) + "/trials")["trials"];
    return trials.empty() ? 0 : trials[0]["id"].get<int64_t>();
  }

  nlohmann::json Get(int64_t trial, const std::string& what) {
    return cluster_.GetJson("/api/v1/trials/" + std::to_string(trial) + what);
  }

  // The experiment's (only) trial after it completed; each metric is checked
  // to be stored once, and the ranks' last log lines are waited for.
  Outcome Result(int64_t exp) {
    Outcome out;
    out.trial = TrialOf(exp);
    const auto trial = Get(out.trial, "");
    EXPECT_EQ(trial["state"], "COMPLETED") << trial.dump();
    out.length = trial["total_batches"].get<int64_t>();
    out.validation = Get(out.trial, "/metrics?kind=validation")["metrics"];
    out.training = Get(out.trial, "/metrics?kind=training")["metrics"];
    for (const auto* kind : {&out.validation, &out.training}) {
      std::set<int64_t> seen;
      for (const auto& m : *kind)
        EXPECT_TRUE(seen.insert(m["batches"].get<int64_t>()).second) << "stored twice";
    }
    // Agents ship log lines in batches, so the last ones may arrive after the
    // trial ended: read until both ranks' final lines are there.
    const std::regex done(R"(digits-pytorch: rank (\d) done at batch (\d+); parameters ([0-9a-f]{16}))");
    auto read_logs = [&] {
      out.joined.clear();
      out.stopped.clear();
      out.digests.clear();
      const auto logs = Get(out.trial, "/logs?limit=10000");  // kept alive for the loop
      for (const auto& l : logs["logs"]) {
        const std::string line = l["line"];
        const int rank = l["rank"];
        if (line.rfind("digits-pytorch: rank " + std::to_string(rank) + " of 2 (gloo)", 0) == 0)
          out.joined.insert(rank);
        if (line.rfind("digits-pytorch: asked to stop", 0) == 0) out.stopped.insert(rank);
        std::smatch m;
        if (std::regex_search(line, m, done)) {
          EXPECT_EQ(std::stoi(m[1]), rank) << line;
          if (std::stoll(m[2]) == out.length) out.digests[rank] = m[3];
        }
      }
      return out.digests.size() == 2;
    };
    TestCluster::WaitFor(read_logs, 15s);
    return out;
  }

  // Two ranks, 200 batches, a checkpoint every 50 at least, seeded dropout.
  std::string Config(const std::string& name, const std::string& hparams) {
    return cluster_.WriteFile(
        name + ".yaml",
        "name: " + name +
            "\nentrypoint: sh run.sh\n"
            "hyperparameters:\n  learning_rate: 0.05\n  batch_size: 32\n  momentum: 0.9\n  dropout: 0.1\n"
            "  report_every: 10\n" +
            hparams +
            "searcher:\n  name: single\n  metric: validation_accuracy\n  smaller_is_better: false\n"
            "  max_length:\n    batches: 200\n"
            "resources:\n  slots_per_trial: 2\n"
            "reproducibility:\n  experiment_seed: 7\n"
            "max_restarts: 0\nmin_checkpoint_period:\n  batches: 50\n");
  }

  TestCluster cluster_;
};

TEST_F(DigitsPytorchE2E, TwoRanksOnTwoAgentsTrainToNinetyFivePercentValidationAccuracy) {
  const int64_t exp = Submit(SourceDir() + "/configs/experiments/digits-pytorch.yaml");
  ASSERT_GT(exp, 0);
  WaitCompleted(exp);
  const Outcome out = Result(exp);
  const auto trial = Get(out.trial, "");
  EXPECT_EQ(trial["restarts"], 0);
  EXPECT_EQ(out.length, 300);

  // One allocation whose two ranks ran on the two agents.
  auto allocations = Get(out.trial, "/allocations")["allocations"];
  ASSERT_EQ(allocations.size(), 1u) << allocations.dump();
  EXPECT_EQ(allocations[0]["exit_code"], 0) << allocations[0].dump();
  const auto& placements = allocations[0]["placements"];
  ASSERT_EQ(placements.size(), 2u) << allocations[0].dump();
  std::set<std::string> agents;
  for (const auto& p : placements) agents.insert(p["agent_id"].get<std::string>());
  EXPECT_EQ(agents, (std::set<std::string>{"agent-1", "agent-2"})) << allocations[0].dump();

  // The searcher metric at the end: at least 95% of the 300 validation images.
  ASSERT_FALSE(out.validation.empty());
  EXPECT_EQ(out.validation.back()["batches"], 300) << out.validation.dump();
  const double accuracy = out.validation.back()["metrics"]["validation_accuracy"].get<double>();
  EXPECT_GE(accuracy, 0.95) << out.validation.dump();
  EXPECT_NEAR(out.validation.back()["metrics"]["validation_error"].get<double>(), 1 - accuracy, 1e-12);
  // Each accuracy is a whole number of the 300 images: the shards' counts were summed.
  double best = 0;
  for (const auto& v : out.validation) {
    const double correct = v["metrics"]["validation_accuracy"].get<double>() * 300;
    EXPECT_NEAR(correct, std::round(correct), 1e-6) << v.dump();
    best = std::max(best, v["metrics"]["validation_accuracy"].get<double>());
  }
  // validation_accuracy is bigger-is-better: the best validation is the highest one.
  EXPECT_DOUBLE_EQ(trial["best_validation"].get<double>(), best) << trial.dump();
  ASSERT_GE(out.training.size(), 2u) << out.training.dump();
  EXPECT_LT(out.training.back()["metrics"]["loss"].get<double>(),
            out.training[0]["metrics"]["loss"].get<double>());

  // Checkpoints were registered (min_checkpoint_period 100), the last at the end.
  const auto checkpoints = Get(out.trial, "/checkpoints")["checkpoints"];
  std::set<int64_t> at;
  for (const auto& c : checkpoints) at.insert(c["batches"].get<int64_t>());
  EXPECT_TRUE(at.count(100) && at.count(300)) << checkpoints.dump();
  EXPECT_FALSE(trial["latest_checkpoint"].is_null()) << trial.dump();

  // Both ranks joined torch's Gloo group of 2 and ended with identical parameters.
  EXPECT_EQ(out.joined, (std::set<int>{0, 1}));
  ASSERT_EQ(out.digests.size(), 2u);
  EXPECT_EQ(out.digests.at(0), out.digests.at(1)) << "the ranks' parameters diverged";
}

TEST_F(DigitsPytorchE2E, PausedAfterItsFirstCheckpointResumesToTheResultOfAnUninterruptedRun) {
  const int64_t baseline = Submit(Config("baseline", ""));
  ASSERT_GT(baseline, 0);
  WaitCompleted(baseline);
  const Outcome want = Result(baseline);
  ASSERT_EQ(want.digests.size(), 2u);

  // The same trial slowed down (no effect on results), paused after its first checkpoint.
  const int64_t exp = Submit(Config("paused", "  batch_sleep_ms: 40\n"));
  ASSERT_GT(exp, 0);
  const int64_t trial = TrialOf(exp);
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] { return !Get(trial, "/checkpoints").value("checkpoints", nlohmann::json::array()).empty(); },
      90s));
  auto paused = cluster_.Ring({"experiment", "pause", std::to_string(exp)});
  ASSERT_EQ(paused.exit_code, 0) << paused.err;
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Get(trial, "")["state"] == "PAUSED"; }, 60s));
  ASSERT_EQ(cluster_.Ring({"experiment", "activate", std::to_string(exp)}).exit_code, 0);
  WaitCompleted(exp);

  const Outcome got = Result(exp);
  EXPECT_EQ(got.stopped, (std::set<int>{0, 1})) << "both ranks stopped at the same step";
  auto allocations = Get(trial, "/allocations")["allocations"];
  ASSERT_EQ(allocations.size(), 2u) << allocations.dump();
  for (const auto& a : allocations) EXPECT_EQ(a["exit_code"], 0) << a.dump();
  EXPECT_EQ(Get(trial, "")["restarts"], 0);
  ASSERT_EQ(got.digests.size(), 2u);
  EXPECT_EQ(got.digests.at(0), want.digests.at(0))
      << "the resumed ranks ended elsewhere than an uninterrupted run";
  EXPECT_EQ(got.digests.at(1), want.digests.at(1));
  ASSERT_FALSE(got.validation.empty());
  EXPECT_EQ(got.validation.back()["batches"], 200);
  EXPECT_EQ(got.validation.back()["metrics"], want.validation.back()["metrics"]);  // bitwise
  EXPECT_EQ(Values(got.training), Values(want.training));
}

}  // namespace
}  // namespace ring::testing::digits_pytorch_e2e
