// Determined's Core API tutorial (tests/determined/core_api, copied byte for
// byte from Determined 0.38.1) on a real cluster, through the runtime's
// `determined` package: stages 0, 1 and 2 run to COMPLETED with their
// metrics and checkpoints, and stage 2 paused after a checkpoint resumes from
// it. The agents' PATH finds Debian's /usr/bin/python3 first (the one with
// torch), as a site running Determined scripts would set it; the package
// reaches the trials through the PYTHONPATH the agent puts first. Stage 3
// runs adaptive_asha on the time metric, stopping trials by preemption;
// stage 4 runs per node on two agents of 4 slots, chosen with --launch.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "tests/support/test_cluster.h"

namespace ring::testing::determined_core_api_e2e {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string TutorialDir() {
  return SourceDir() + "/tests/determined/core_api";
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Why the tutorial cannot run in this build; empty when it can.
std::string WhyNotRunnable() {
  if (!fs::exists("/usr/bin/python3")) return "/usr/bin/python3 is missing";
  if (!fs::exists(BinDir() + "/../python/determined/__init__.py"))
    return "the trial runtime's Python folder (" + BinDir() +
           "/../python) was not built: CMake needs pybind11-dev and python3-dev for /usr/bin/python3";
  return "";
}

class DeterminedCoreApiE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = WhyNotRunnable(); !why.empty()) GTEST_SKIP() << why;
    cluster_.StartMaster();
    TestCluster::AgentOptions options;
    const char* path = std::getenv("PATH");
    options.env["PATH"] = std::string("/usr/bin:/bin") + (path ? std::string(":") + path : "");
    cluster_.StartAgent("agent-1", 4, options);  // stage 3 runs trials side by side
  }

  void TearDown() override {
    if (HasFailure()) cluster_.DumpLogs();
  }

  // Submits the tutorial's config as it is, with `flags` for the CLI.
  int64_t Submit(const std::string& stage, const std::vector<std::string>& flags = {}) {
    std::vector<std::string> args{"--json", "experiment", "create", TutorialDir() + "/" + stage + ".yaml",
                                  TutorialDir()};
    args.insert(args.end(), flags.begin(), flags.end());
    auto created = cluster_.Ring(args);
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
    nlohmann::json trials;
    TestCluster::WaitFor(
        [&] {
          trials = cluster_.GetJson("/api/v1/experiments/" + std::to_string(exp) + "/trials")["trials"];
          return !trials.empty();
        },
        30s);
    return trials.empty() ? 0 : trials[0]["id"].get<int64_t>();
  }

  nlohmann::json Get(int64_t trial, const std::string& what) {
    return cluster_.GetJson("/api/v1/trials/" + std::to_string(trial) + what);
  }

  // batches -> value of metric x.
  std::map<int64_t, double> X(int64_t trial, const std::string& kind) {
    std::map<int64_t, double> out;
    const auto metrics = Get(trial, "/metrics?kind=" + kind)["metrics"];  // kept alive for the loop
    for (const auto& m : metrics) {
      EXPECT_TRUE(out.emplace(m["batches"].get<int64_t>(), m["metrics"]["x"].get<double>()).second)
          << "stored twice: " << m.dump();
    }
    return out;
  }

  // The trial's log lines, once `done` holds for them (lines arrive in batches).
  nlohmann::json LogsWhen(int64_t trial, const std::function<bool(const nlohmann::json&)>& done) {
    nlohmann::json logs;
    TestCluster::WaitFor(
        [&] {
          logs = Get(trial, "/logs?limit=10000")["logs"];
          return done(logs);
        },
        15s);
    return logs;
  }

  static bool HasLine(const nlohmann::json& logs, const std::string& text) {
    for (const auto& l : logs)
      if (l["line"].get<std::string>().find(text) != std::string::npos) return true;
    return false;
  }

  TestCluster cluster_;
};

std::map<int64_t, double> Tens(int64_t from) {  // x == steps at every tenth step from `from`
  std::map<int64_t, double> out;
  for (int64_t s = from; s <= 100; s += 10) out[s] = static_cast<double>(s);
  return out;
}

TEST_F(DeterminedCoreApiE2E, Stage0PlainScriptCompletes) {
  const int64_t exp = Submit("0_start");
  ASSERT_GT(exp, 0);
  WaitCompleted(exp);
  const int64_t trial = TrialOf(exp);
  EXPECT_EQ(Get(trial, "")["state"], "COMPLETED");
  const auto logs = LogsWhen(trial, [](const nlohmann::json& l) { return HasLine(l, "x is now 100"); });
  EXPECT_TRUE(HasLine(logs, "x is now 100")) << logs.dump();
}

TEST_F(DeterminedCoreApiE2E, Stage1ReportsTrainingAndValidationMetrics) {
  const int64_t exp = Submit("1_metrics");
  ASSERT_GT(exp, 0);
  WaitCompleted(exp);
  const int64_t trial = TrialOf(exp);
  const auto info = Get(trial, "");
  EXPECT_EQ(info["state"], "COMPLETED") << info.dump();
  EXPECT_EQ(X(trial, "training"), Tens(10));
  EXPECT_EQ(X(trial, "validation"), (std::map<int64_t, double>{{100, 100.0}}));
  // det.LOG_FORMAT lines, and no local-mode notice: the package knew it was on a cluster.
  const auto logs = LogsWhen(trial, [](const nlohmann::json& l) { return HasLine(l, "x is now 100"); });
  EXPECT_TRUE(HasLine(logs, "WARNING: [")) << logs.dump();
  EXPECT_TRUE(HasLine(logs, "root: warning-level message")) << logs.dump();
  EXPECT_FALSE(HasLine(logs, "not on a Ringmaster cluster")) << logs.dump();
}

TEST_F(DeterminedCoreApiE2E, Stage2CheckpointsAndCompletes) {
  const int64_t exp = Submit("2_checkpoints");
  ASSERT_GT(exp, 0);
  WaitCompleted(exp);
  const int64_t trial = TrialOf(exp);
  EXPECT_EQ(X(trial, "training"), Tens(10));
  EXPECT_EQ(X(trial, "validation"), (std::map<int64_t, double>{{100, 100.0}}));
  // A checkpoint at every tenth step, its metadata as the script gave it,
  // its file holding "x,steps,trial".
  const auto checkpoints = Get(trial, "/checkpoints")["checkpoints"];
  std::set<int64_t> at;
  for (const auto& c : checkpoints) {
    const int64_t batches = c["batches"].get<int64_t>();
    at.insert(batches);
    EXPECT_EQ(c["metadata"].value("steps_completed", int64_t{-1}), batches) << c.dump();
    bool has_state = false;
    for (const auto& r : c["resources"]) has_state = has_state || r["path"] == "state";
    EXPECT_TRUE(has_state) << c.dump();
  }
  std::set<int64_t> want;
  for (const auto& [s, _] : Tens(10)) want.insert(s);
  EXPECT_EQ(at, want) << checkpoints.dump();
}

TEST_F(DeterminedCoreApiE2E, Stage2PausedResumesFromItsCheckpoint) {
  const int64_t exp = Submit("2_checkpoints");
  ASSERT_GT(exp, 0);
  const int64_t trial = TrialOf(exp);
  ASSERT_GT(trial, 0);
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] { return !Get(trial, "/checkpoints").value("checkpoints", nlohmann::json::array()).empty(); },
      90s));
  auto paused = cluster_.Ring({"experiment", "pause", std::to_string(exp)});
  ASSERT_EQ(paused.exit_code, 0) << paused.err;
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Get(trial, "")["state"] == "PAUSED"; }, 60s))
      << Get(trial, "").dump();
  const auto checkpoints = Get(trial, "/checkpoints")["checkpoints"];
  ASSERT_FALSE(checkpoints.empty());
  int64_t resume_at = 0;
  for (const auto& c : checkpoints) resume_at = std::max(resume_at, c["batches"].get<int64_t>());
  EXPECT_LT(resume_at, 100) << "paused too late to resume anything";

  ASSERT_EQ(cluster_.Ring({"experiment", "activate", std::to_string(exp)}).exit_code, 0);
  WaitCompleted(exp);
  const auto info = Get(trial, "");
  EXPECT_EQ(info["restarts"], 0) << info.dump();
  // Two allocations, both ending 0: the pause was a preemption, not a failure.
  const auto allocations = Get(trial, "/allocations")["allocations"];
  ASSERT_EQ(allocations.size(), 2u) << allocations.dump();
  for (const auto& a : allocations) EXPECT_EQ(a["exit_code"], 0) << a.dump();
  // Every tenth step reported exactly once across both runs, ending at x == 100:
  // the second run went on from the checkpoint's step and value.
  EXPECT_EQ(X(trial, "training"), Tens(10));
  EXPECT_EQ(X(trial, "validation"), (std::map<int64_t, double>{{100, 100.0}}));
  const std::string second = allocations[1]["id"].get<std::string>();
  const auto logs = LogsWhen(trial, [&](const nlohmann::json& l) { return HasLine(l, "x is now 100"); });
  const std::regex x_is(R"(x is now (\d+))");
  int64_t first_x = -1;
  for (const auto& l : logs) {
    std::smatch m;
    const std::string line = l["line"];
    if (l["allocation_id"] == second && std::regex_search(line, m, x_is)) {
      first_x = std::stoll(m[1]);
      break;
    }
  }
  EXPECT_EQ(first_x, resume_at + 1) << "the resumed run did not start after its checkpoint";
}

// Stage 3 needs Determined 0.38's searcher contract (validation metrics with
// the time_metric drive adaptive_asha, which stops trials by preemption).
TEST_F(DeterminedCoreApiE2E, Stage3AshaStopsTrialsByPreemption) {
  const int64_t exp = Submit("3_hpsearch");
  ASSERT_GT(exp, 0);
  WaitCompleted(exp);
  const auto trials = cluster_.GetJson("/api/v1/experiments/" + std::to_string(exp) + "/trials")["trials"];
  EXPECT_EQ(trials.size(), 10u) << trials.dump();
  int stopped_early = 0;
  for (const auto& t : trials) {
    const int64_t id = t["id"].get<int64_t>();
    EXPECT_FALSE(Get(id, "/metrics?kind=validation")["metrics"].empty()) << t.dump();
    EXPECT_FALSE(Get(id, "/checkpoints")["checkpoints"].empty()) << t.dump();
    // Every trial ends COMPLETED in one allocation whose process exited 0:
    // none failed, none was paused and resumed.
    EXPECT_EQ(t["state"], "COMPLETED") << t.dump();
    EXPECT_EQ(t["restarts"], 0) << t.dump();
    const auto allocations = Get(id, "/allocations")["allocations"];
    ASSERT_EQ(allocations.size(), 1u) << "a stopped trial is not resumed: " << allocations.dump();
    EXPECT_EQ(allocations[0]["exit_code"], 0) << allocations[0].dump();
    const auto validations = X(id, "validation");
    ASSERT_FALSE(validations.empty()) << t.dump();
    if (validations.rbegin()->first >= 100) continue;  // trained to max_time
    // Stopped before max_time: the searcher asked it to stop through
    // preemption, the script saw should_preempt() and returned.
    ++stopped_early;
    EXPECT_EQ(allocations[0]["end_cause"], "SEARCHER_STOPPED") << allocations[0].dump();
    EXPECT_EQ(t["total_batches"], validations.rbegin()->first) << "it stopped at its last validation";
  }
  EXPECT_GT(stopped_early, 0) << "ASHA stopped no trial before max_time: " << trials.dump();
}

// Stage 4 needs per-node launch: one `4_distributed.py launcher` process per
// agent, with RING_SLOT_IDS, RING_CONTAINER_ADDRS and RING_CONTAINER_RANK.
TEST(DeterminedCoreApiStage4E2E, EightSlotsOnTwoAgentsLaunchedPerNode) {
  if (auto why = WhyNotRunnable(); !why.empty()) GTEST_SKIP() << why;
  TestCluster cluster;
  cluster.StartMaster();
  TestCluster::AgentOptions options;
  const char* path = std::getenv("PATH");
  options.env["PATH"] = std::string("/usr/bin:/bin") + (path ? std::string(":") + path : "");
  cluster.StartAgent("agent-1", 4, options);
  cluster.StartAgent("agent-2", 4, options);
  auto created = cluster.Ring({"--json", "experiment", "create", TutorialDir() + "/4_distributed.yaml",
                               TutorialDir(), "--launch", "per_node"});
  ASSERT_EQ(created.exit_code, 0) << created.out << created.err;
  const int64_t exp = nlohmann::json::parse(created.out, nullptr, false).value("id", int64_t{0});
  ASSERT_GT(exp, 0);
  auto waited = cluster.Ring({"experiment", "wait", std::to_string(exp)});
  ASSERT_EQ(waited.exit_code, 0) << waited.out << waited.err;
  EXPECT_EQ(cluster.GetJson("/api/v1/experiments/" + std::to_string(exp))["state"], "COMPLETED");
  const auto trials = cluster.GetJson("/api/v1/experiments/" + std::to_string(exp) + "/trials")["trials"];
  ASSERT_EQ(trials.size(), 1u);
  const int64_t trial = trials[0]["id"].get<int64_t>();
  const auto hparams = trials[0]["hparams"];
  const double increment = hparams.value("increment_by", 0.0);
  // allgather of 8 ranks' increment_by every step: x == 8 * increment_by * steps.
  const auto validation =
      cluster.GetJson("/api/v1/trials/" + std::to_string(trial) + "/metrics?kind=validation")["metrics"];
  ASSERT_FALSE(validation.empty());
  EXPECT_EQ(validation.back()["batches"], 100);
  EXPECT_DOUBLE_EQ(validation.back()["metrics"]["x"].get<double>(), 8 * increment * 100) << validation.dump();
  EXPECT_FALSE(
      cluster.GetJson("/api/v1/trials/" + std::to_string(trial) + "/checkpoints")["checkpoints"].empty());
}

}  // namespace
}  // namespace ring::testing::determined_core_api_e2e
