// Faults injected into a real cluster (kill -9, SIGSTOP) while the quadratic
// trial trains with checkpoints. In every case the experiment completes with
// the same final validation loss and the same final checkpoint bytes as an
// uninterrupted run with the same seed, and every metric is stored once.
#include <signal.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "tests/support/test_cluster.h"

namespace ring::testing::fault_tolerance_e2e {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

struct Outcome {
  double final_validation = 0;
  nlohmann::json final_checkpoint_files;  // [{"path","size","sha256"}]
};

class FaultToleranceE2E : public ::testing::Test {
 protected:
  void StartCluster(int agents, TestCluster::MasterOptions options = {.heartbeat_timeout_ms = 1500,
                                                                      .reconnect_window_ms = 1500}) {
    cluster_.StartMaster(options);
    for (int i = 1; i <= agents; ++i) cluster_.StartAgent("agent-" + std::to_string(i), 1);
    model_ = MakeModel();
  }

  // The staged quadratic folder plus a launcher that leaves the trial's pid.
  std::string MakeModel() {
    const std::string dir = cluster_.dir() + "/model";
    fs::copy(BinDir() + "/../examples/quadratic/model", dir, fs::copy_options::recursive);
    cluster_.MakeModelDir("model", {{"launch.sh",
                                     "#!/bin/sh\necho $$ > \"$PID_DIR/pid-$RING_ALLOCATION_ID\"\n"
                                     "exec sh run.sh \"$@\"\n"}});
    return dir;
  }

  std::string Config(const std::string& name, int64_t batch_sleep_ms) {
    return "name: " + name +
           "\n"
           "entrypoint: sh launch.sh\n"
           "hyperparameters:\n"
           "  learning_rate: 0.05\n  batch_size: 32\n  report_every: 50\n  momentum: 0.9\n"
           "  checkpoint_every: 100\n  batch_sleep_ms: " +
           std::to_string(batch_sleep_ms) +
           "\n"
           "searcher:\n  name: single\n  metric: validation_loss\n  max_length:\n    batches: 500\n"
           "reproducibility:\n  experiment_seed: 7\n"
           "max_restarts: 3\n"
           "min_checkpoint_period:\n  batches: 100\n"
           "checkpoint_storage:\n  type: shared_fs\n  host_path: " +
           cluster_.dir() + "/master/checkpoints\n  storage_path: " + name +  // the default root: allowed
           "\n  save_trial_best: 0\n  save_trial_latest: 1\n"
           "environment:\n  variables:\n    PID_DIR: " +
           cluster_.dir() + "\n";
  }

  int64_t Submit(const std::string& name, int64_t batch_sleep_ms) {
    auto path = cluster_.WriteFile(name + ".yaml", Config(name, batch_sleep_ms));
    auto created = cluster_.Ring({"--json", "experiment", "create", path, model_});
    EXPECT_EQ(created.exit_code, 0) << created.out << created.err;
    auto j = nlohmann::json::parse(created.out, nullptr, false);
    return j.is_object() ? j.value("id", int64_t{0}) : 0;
  }

  // First trial of an experiment (the single searcher makes one).
  int64_t TrialOf(int64_t exp) {
    auto trials = cluster_.GetJson("/api/v1/experiments/" + std::to_string(exp) + "/trials")["trials"];
    return trials.empty() ? 0 : trials[0]["id"].get<int64_t>();
  }

  nlohmann::json Allocations(int64_t trial) {
    return cluster_.GetJson("/api/v1/trials/" + std::to_string(trial) + "/allocations")["allocations"];
  }

  bool WaitForCheckpoint(int64_t trial, int64_t batches) {
    return TestCluster::WaitFor(
        [&] {
          // The trial's latest, not the list: a checkpoint is listed a moment
          // before the trial points at it.
          const auto t = cluster_.GetJson("/api/v1/trials/" + std::to_string(trial));
          if (!t.contains("latest_checkpoint") || !t["latest_checkpoint"].is_string()) return false;
          const auto c = cluster_.GetJson("/api/v1/checkpoints/" + t["latest_checkpoint"].get<std::string>());
          return c.value("batches", int64_t{0}) >= batches;
        },
        30s);
  }

  pid_t TrialPid(const std::string& allocation_id) {
    const std::string text = ReadFileText(cluster_.dir() + "/pid-" + allocation_id);
    return text.empty() ? 0 : static_cast<pid_t>(std::stol(text));
  }

  void WaitCompleted(int64_t exp) {
    auto waited = cluster_.Ring({"experiment", "wait", std::to_string(exp)});
    ASSERT_EQ(waited.exit_code, 0) << waited.out << waited.err;
  }

  // The result of a finished trial, after checking each metric was stored once.
  Outcome Result(int64_t exp) {
    const int64_t trial = TrialOf(exp);
    const std::string base = "/api/v1/trials/" + std::to_string(trial);
    auto training = cluster_.GetJson(base + "/metrics?kind=training")["metrics"];
    std::set<int64_t> seen;
    for (const auto& m : training)
      EXPECT_TRUE(seen.insert(m["batches"].get<int64_t>()).second) << "stored twice";
    EXPECT_EQ(seen.size(), 10u);  // every 50 of 500 batches, once each
    auto validation = cluster_.GetJson(base + "/metrics?kind=validation")["metrics"];
    std::set<int64_t> vseen;
    for (const auto& m : validation) EXPECT_TRUE(vseen.insert(m["batches"].get<int64_t>()).second);
    Outcome out;
    if (!validation.empty())
      out.final_validation = validation.back()["metrics"]["validation_loss"].get<double>();
    const auto checkpoints = cluster_.GetJson(base + "/checkpoints");
    for (const auto& c : checkpoints.value("checkpoints", nlohmann::json::array()))
      if (c["state"] == "ACTIVE" && c["batches"] == 500) out.final_checkpoint_files = c["resources"];
    EXPECT_FALSE(out.final_checkpoint_files.empty())
        << "no final checkpoint: " << cluster_.GetJson(base + "/checkpoints").dump().substr(0, 2000);
    return out;
  }

  Outcome Baseline() {
    const int64_t exp = Submit("baseline", 0);
    WaitCompleted(exp);
    return Result(exp);
  }

  void ExpectSame(const Outcome& got, const Outcome& want) {
    EXPECT_EQ(got.final_validation, want.final_validation);  // bitwise, not approximately
    EXPECT_EQ(got.final_checkpoint_files, want.final_checkpoint_files);
  }

  void TearDown() override {
    // Trials orphaned by a killed agent are stopped here.
    for (const auto& entry : fs::directory_iterator(cluster_.dir()))
      if (entry.path().filename().string().rfind("pid-", 0) == 0)
        if (pid_t pid = static_cast<pid_t>(std::stol(ReadFileText(entry.path().string()))); pid > 0)
          ::kill(pid, SIGKILL);
  }

  TestCluster cluster_;
  std::string model_;
};

TEST_F(FaultToleranceE2E, KilledTrialRestartsFromItsCheckpoint) {
  StartCluster(1);
  const Outcome want = Baseline();
  const int64_t exp = Submit("faulted", 10);
  const int64_t trial = TrialOf(exp);
  ASSERT_TRUE(WaitForCheckpoint(trial, 100));
  const pid_t pid = TrialPid(std::to_string(trial) + ".0");
  ASSERT_GT(pid, 0);
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  WaitCompleted(exp);
  auto t = cluster_.GetJson("/api/v1/trials/" + std::to_string(trial));
  EXPECT_EQ(t["restarts"], 1);
  auto allocs = Allocations(trial);
  ASSERT_EQ(allocs.size(), 2u);
  // The entrypoint's shell reports its child's SIGKILL as exit code 137.
  const std::string reason = allocs[0]["exit_reason"];
  EXPECT_TRUE(reason == "rank 0 killed by signal 9" || reason == "rank 0 exited with code 137") << reason;
  ExpectSame(Result(exp), want);
}

TEST_F(FaultToleranceE2E, LostAgentsTrialResumesOnAnotherAgentWithoutARestart) {
  StartCluster(2);
  const Outcome want = Baseline();
  const int64_t exp = Submit("faulted", 10);
  const int64_t trial = TrialOf(exp);
  ASSERT_TRUE(WaitForCheckpoint(trial, 100));
  const std::string victim = Allocations(trial)[0]["placements"][0]["agent_id"];
  cluster_.agent(victim).Signal(SIGKILL);
  WaitCompleted(exp);
  auto allocs = Allocations(trial);
  ASSERT_EQ(allocs.size(), 2u);
  EXPECT_EQ(allocs[0]["exit_reason"], "agent lost");
  EXPECT_NE(allocs[1]["placements"][0]["agent_id"], victim);
  EXPECT_EQ(cluster_.GetJson("/api/v1/trials/" + std::to_string(trial))["restarts"], 0);
  ExpectSame(Result(exp), want);
}

TEST_F(FaultToleranceE2E, StoppedAgentsStaleProcessIsFencedOutAndKilled) {
  StartCluster(2);
  const Outcome want = Baseline();
  const int64_t exp = Submit("faulted", 15);
  const int64_t trial = TrialOf(exp);
  ASSERT_TRUE(WaitForCheckpoint(trial, 100));
  const std::string victim = Allocations(trial)[0]["placements"][0]["agent_id"];
  const pid_t stale = TrialPid(std::to_string(trial) + ".0");
  cluster_.agent(victim).Signal(SIGSTOP);
  // Past the heartbeat deadline and the reconnect window, the trial moves on.
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Allocations(trial).size() == 2; }, 15s));
  EXPECT_EQ(Allocations(trial)[0]["exit_reason"], "agent lost");
  cluster_.agent(victim).Signal(SIGCONT);
  // The agent returns, still running the old process; the master has it killed.
  EXPECT_TRUE(TestCluster::WaitFor([&] { return ::kill(stale, 0) != 0; }, 20s)) << "stale trial still alive";
  WaitCompleted(exp);
  EXPECT_EQ(cluster_.GetJson("/api/v1/trials/" + std::to_string(trial))["restarts"], 0);
  ExpectSame(Result(exp), want);
}

TEST_F(FaultToleranceE2E, MasterKilledAndRestartedKeepsTheSameTrialProcess) {
  StartCluster(1);
  const Outcome want = Baseline();
  const int64_t exp = Submit("faulted", 10);
  const int64_t trial = TrialOf(exp);
  ASSERT_TRUE(WaitForCheckpoint(trial, 100));
  const pid_t pid = TrialPid(std::to_string(trial) + ".0");
  cluster_.KillMaster();
  std::this_thread::sleep_for(1s);
  EXPECT_EQ(::kill(pid, 0), 0) << "the trial died with the master";
  cluster_.StartMaster({.heartbeat_timeout_ms = 1500, .reconnect_window_ms = 1500});
  WaitCompleted(exp);
  auto allocs = Allocations(trial);
  ASSERT_EQ(allocs.size(), 1u) << allocs.dump();  // the same allocation, reattached
  EXPECT_EQ(allocs[0]["exit_reason"], "exited with code 0");
  EXPECT_EQ(cluster_.GetJson("/api/v1/trials/" + std::to_string(trial))["restarts"], 0);
  ExpectSame(Result(exp), want);
}

TEST_F(FaultToleranceE2E, PauseThenActivateGivesTheSameResult) {
  StartCluster(1);
  const Outcome want = Baseline();
  const int64_t exp = Submit("paused", 10);
  const int64_t trial = TrialOf(exp);
  ASSERT_TRUE(WaitForCheckpoint(trial, 100));
  auto paused = cluster_.Ring({"experiment", "pause", std::to_string(exp)});
  ASSERT_EQ(paused.exit_code, 0) << paused.err;
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] { return cluster_.GetJson("/api/v1/trials/" + std::to_string(trial))["state"] == "PAUSED"; }, 20s));
  // The slot is free again while paused.
  auto agents = cluster_.GetJson("/api/v1/agents")["agents"];
  EXPECT_TRUE(agents[0]["slots"][0]["allocation_id"].is_null());
  ASSERT_EQ(cluster_.Ring({"experiment", "activate", std::to_string(exp)}).exit_code, 0);
  WaitCompleted(exp);
  EXPECT_EQ(cluster_.GetJson("/api/v1/trials/" + std::to_string(trial))["restarts"], 0);
  ExpectSame(Result(exp), want);

  // The CLI lists the checkpoints and downloads the final one intact.
  auto listed = cluster_.Ring({"checkpoint", "list", std::to_string(exp)});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_NE(listed.out.find("ACTIVE"), std::string::npos) << listed.out;
  EXPECT_NE(listed.out.find("DELETED"), std::string::npos) << listed.out;  // garbage collected
  const std::string uuid = cluster_.GetJson("/api/v1/trials/" + std::to_string(trial))["latest_checkpoint"];
  EXPECT_NE(listed.out.find(uuid), std::string::npos);
  const std::string into = cluster_.dir() + "/downloaded";
  auto downloaded = cluster_.Ring({"checkpoint", "download", uuid, into});
  ASSERT_EQ(downloaded.exit_code, 0) << downloaded.err;
  for (const auto& f : want.final_checkpoint_files)
    EXPECT_EQ(fs::file_size(into + "/" + f["path"].get<std::string>()), f["size"].get<uint64_t>());
}

TEST_F(FaultToleranceE2E, CorruptedCheckpointIsRefusedAtRestore) {
  StartCluster(1);
  const int64_t exp = Submit("corrupt", 10);
  const int64_t trial = TrialOf(exp);
  ASSERT_TRUE(WaitForCheckpoint(trial, 100));
  const pid_t pid = TrialPid(std::to_string(trial) + ".0");
  ::kill(pid, SIGSTOP);  // hold it so the latest checkpoint stays the one we corrupt
  auto t = cluster_.GetJson("/api/v1/trials/" + std::to_string(trial));
  auto ckpt = cluster_.GetJson("/api/v1/checkpoints/" + t["latest_checkpoint"].get<std::string>());
  const std::string dir = ckpt["storage"]["host_path"].get<std::string>() + "/" +
                          ckpt["storage"]["storage_path"].get<std::string>() + "/" +
                          ckpt["uuid"].get<std::string>();
  const std::string file = dir + "/" + ckpt["resources"][0]["path"].get<std::string>();
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(f.good()) << file;
    char c = 0;
    f.read(&c, 1);
    f.seekp(0);
    c = static_cast<char>(c ^ 0x5a);
    f.write(&c, 1);
  }
  ::kill(pid, SIGKILL);
  auto waited = cluster_.Ring({"experiment", "wait", std::to_string(exp)});
  EXPECT_EQ(waited.exit_code, 1);  // every restart refuses the corrupted checkpoint
  EXPECT_EQ(cluster_.GetJson("/api/v1/experiments/" + std::to_string(exp))["state"], "ERROR");
  auto logs = cluster_.Ring({"trial", "logs", std::to_string(trial)});
  EXPECT_NE(logs.out.find(ckpt["resources"][0]["path"].get<std::string>()), std::string::npos) << logs.out;
  EXPECT_NE(logs.out.find("sha256"), std::string::npos) << logs.out;
}

}  // namespace
}  // namespace ring::testing::fault_tolerance_e2e

namespace ring::testing::fault_tolerance_e2e {
namespace {

// Preemption by priority: the low-priority trial checkpoints, steps aside for
// the high one, resumes from its checkpoint without counting a restart, and
// ends exactly like an uninterrupted run.
TEST_F(FaultToleranceE2E, HigherPriorityPreemptsAndTheVictimEndsLikeAnUninterruptedRun) {
  StartCluster(1);  // one agent with one slot
  const Outcome want = Baseline();
  const int64_t low = Submit("low", 10);  // priority 42
  const int64_t trial = TrialOf(low);
  ASSERT_TRUE(WaitForCheckpoint(trial, 100));

  auto path = cluster_.WriteFile("high.yaml", Config("high", 0) + "resources:\n  priority: 10\n");
  auto created = cluster_.Ring({"--json", "experiment", "create", path, model_});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  const int64_t high = nlohmann::json::parse(created.out).value("id", int64_t{0});
  WaitCompleted(high);
  WaitCompleted(low);

  auto allocs = Allocations(trial);
  ASSERT_EQ(allocs.size(), 2u) << allocs.dump();
  EXPECT_EQ(allocs[0]["exit_reason"], "exited with code 0");  // checkpointed and stepped aside
  const auto high_alloc = Allocations(TrialOf(high)).at(0);
  EXPECT_GE(allocs[1]["ended_at"].get<std::string>(), high_alloc["ended_at"].get<std::string>())
      << "on one slot the low trial finishes after the high one";
  EXPECT_EQ(cluster_.GetJson("/api/v1/trials/" + std::to_string(trial))["restarts"], 0);
  ExpectSame(Result(low), want);
}

}  // namespace
}  // namespace ring::testing::fault_tolerance_e2e
