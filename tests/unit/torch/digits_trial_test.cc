// The digits-libtorch trial run alone (local mode, world size 1) as a real
// process: it learns well above chance in a short run, resumes bit for bit
// from a checkpoint and after being stopped with SIGTERM, and rejects bad
// hyperparameters, data and searcher metrics with clear errors.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/process.h"

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using ring::testing::ChildProcess;
using ring::testing::CommandResult;
using ring::testing::ReadFileText;
using ring::testing::RunCommand;

constexpr const char* kDigitsData = "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz";

// One thread per process, as run.sh sets it.
const std::map<std::string, std::string> kEnv = {{"OMP_NUM_THREADS", "1"}, {"OPENBLAS_NUM_THREADS", "1"}};

class DigitsTrialTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kDigitsData)) GTEST_SKIP() << kDigitsData << " is missing (Debian: python3-sklearn)";
    work_ = fs::temp_directory_path() / ("digits-trial-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(work_);
    fs::create_directories(work_);
  }
  void TearDown() override {
    if (!work_.empty()) fs::remove_all(work_);
  }

  std::vector<std::string> Args(int64_t batches, const std::string& dir, std::vector<std::string> extra) {
    std::vector<std::string> args = {DIGITS_TRIAL_PATH,
                                     "--hparam",
                                     "learning_rate=0.05",
                                     "--hparam",
                                     "report_every=10",
                                     "--batches",
                                     std::to_string(batches),
                                     "--seed",
                                     "5",
                                     "--checkpoint-dir",
                                     (work_ / dir).string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }

  CommandResult Run(int64_t batches, const std::string& dir, std::vector<std::string> extra = {}) {
    return RunCommand(Args(batches, dir, std::move(extra)), kEnv, 120s);
  }

  // Checkpoint directories under `dir` by their batches.
  std::map<int64_t, fs::path> Checkpoints(const std::string& dir) {
    std::map<int64_t, fs::path> found;
    if (!fs::exists(work_ / dir)) return found;
    for (const auto& e : fs::directory_iterator(work_ / dir)) {
      const fs::path manifest = e.path() / ".ring-checkpoint.json";
      if (!fs::exists(manifest)) continue;
      found[nlohmann::json::parse(ReadFileText(manifest.string()))["batches"].get<int64_t>()] = e.path();
    }
    return found;
  }

  fs::path work_;
};

// "digits: rank 0 done at batch N; parameters HEX" -> HEX.
std::string Digest(const std::string& out) {
  std::smatch m;
  const std::regex done(R"(digits: rank 0 done at batch \d+; parameters ([0-9a-f]{16}))");
  return std::regex_search(out, m, done) ? m[1].str() : "";
}

// The metric lines the runtime printed at more than `after` batches.
std::vector<std::string> MetricLinesAfter(const std::string& out, int64_t after) {
  std::vector<std::string> lines;
  const std::regex metric(R"(\[ring\.trial\] (training|validation) batches=(\d+) .*)");
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_match(line, m, metric) && std::stoll(m[2]) > after) lines.push_back(line);
  }
  return lines;
}

// The last validation's correct images out of 300.
int LastCorrect(const std::string& out) {
  const std::regex validation(R"(validation_accuracy [0-9.]+ \((\d+)/300\))");
  int correct = -1;
  for (auto it = std::sregex_iterator(out.begin(), out.end(), validation); it != std::sregex_iterator(); ++it)
    correct = std::stoi((*it)[1]);
  return correct;
}

TEST_F(DigitsTrialTest, ShortLocalRunLearnsFarAboveChance) {
  const auto start = std::chrono::steady_clock::now();
  auto env = kEnv;
  env["RING_SEARCHER_METRIC"] = "validation_accuracy";  // what the example configs use
  auto run = RunCommand(Args(80, "short", {}), env, 120s);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("digits: rank 0 of 1 (single)"), std::string::npos) << run.out;
  // Chance is 10%; 80 steps of 32 images (under two epochs) get far past it.
  const int correct = LastCorrect(run.out);
  EXPECT_GE(correct, 270) << run.out;
  EXPECT_NE(run.out.find("[ring.trial] searcher operation length=80 completed validation_accuracy="),
            std::string::npos)
      << run.out;
  // The training loss fell.
  const auto lines = MetricLinesAfter(run.out, 0);
  ASSERT_GE(lines.size(), 2u) << run.out;
  const std::regex loss(R"(loss=([0-9.e+-]+))");
  std::smatch first, last;
  ASSERT_TRUE(std::regex_search(lines.front(), first, loss)) << lines.front();
  ASSERT_TRUE(std::regex_search(lines[lines.size() - 2], last, loss)) << lines[lines.size() - 2];
  EXPECT_LT(std::stod(last[1]), std::stod(first[1]) / 2) << run.out;
  EXPECT_LT(seconds, 30) << "80 batches should take a few seconds";
}

TEST_F(DigitsTrialTest, ResumesFromACheckpointBitForBit) {
  const std::vector<std::string> extra = {"--hparam", "dropout=0.25",     "--hparam", "checkpoint_every=20",
                                          "--hparam", "validate_every=20"};
  auto whole = Run(60, "whole", extra);
  ASSERT_EQ(whole.exit_code, 0) << whole.out << whole.err;
  const auto checkpoints = Checkpoints("whole");
  ASSERT_EQ(checkpoints.size(), 3u) << whole.out;  // 20, 40, 60
  ASSERT_FALSE(Digest(whole.out).empty()) << whole.out;
  for (const char* file : {"model.pt", "optimizer.pt"})
    EXPECT_TRUE(fs::exists(checkpoints.at(20) / file)) << file;

  std::vector<std::string> resume = extra;
  resume.push_back("--resume");
  resume.push_back(checkpoints.at(20).string());
  auto resumed = Run(60, "resumed", resume);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
  EXPECT_NE(
      resumed.out.find("resumed from checkpoint " + checkpoints.at(20).filename().string() + " at batch 20"),
      std::string::npos)
      << resumed.out;
  EXPECT_EQ(Digest(resumed.out), Digest(whole.out));
  EXPECT_EQ(MetricLinesAfter(resumed.out, 0), MetricLinesAfter(whole.out, 20));
}

TEST_F(DigitsTrialTest, StopsOnSigtermWithACheckpointAndResumesToTheSameModel) {
  auto whole = Run(60, "whole");
  ASSERT_EQ(whole.exit_code, 0) << whole.out << whole.err;

  // The same run slowed down (no effect on results), stopped partway.
  std::vector<std::string> argv = Args(60, "stopped", {"--hparam", "batch_sleep_ms=100"});
  ChildProcess slow(argv, kEnv, (work_ / "stopped.log").string());
  ASSERT_TRUE([&] {
    for (int i = 0; i < 300; ++i, std::this_thread::sleep_for(100ms))
      if (ReadFileText((work_ / "stopped.log").string()).find("batches=10 ") != std::string::npos)
        return true;
    return false;
  }()) << ReadFileText((work_ / "stopped.log").string());
  slow.Signal(SIGTERM);
  ASSERT_EQ(slow.Wait(60s), 0) << ReadFileText((work_ / "stopped.log").string());
  const std::string stopped = ReadFileText((work_ / "stopped.log").string());
  EXPECT_NE(stopped.find("digits: asked to stop; checkpointed at batch"), std::string::npos) << stopped;
  const auto checkpoints = Checkpoints("stopped");
  ASSERT_EQ(checkpoints.size(), 1u) << stopped;
  const int64_t at = checkpoints.begin()->first;
  EXPECT_GE(at, 10);
  EXPECT_LT(at, 60);

  auto resumed = Run(60, "resumed", {"--resume", checkpoints.begin()->second.string()});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
  EXPECT_EQ(Digest(resumed.out), Digest(whole.out)) << resumed.out;
  EXPECT_EQ(MetricLinesAfter(resumed.out, 0), MetricLinesAfter(whole.out, at));
}

TEST_F(DigitsTrialTest, BadHyperparametersDataAndMetricAreClearErrors) {
  auto lr = Run(10, "lr", {"--hparam", "learning_rate=-1"});
  EXPECT_EQ(lr.exit_code, 2) << lr.out << lr.err;
  EXPECT_NE(lr.err.find("learning_rate must be in (0, 10], got -1"), std::string::npos) << lr.err;

  auto batch = Run(10, "batch", {"--hparam", "batch_size=0"});
  EXPECT_EQ(batch.exit_code, 2) << batch.err;
  EXPECT_NE(batch.err.find("batch_size (records per rank per step) must be between 1 and 1024"),
            std::string::npos)
      << batch.err;

  const std::string missing = (work_ / "none" / "digits.csv.gz").string();
  auto data = Run(10, "data", {"--hparam", "data_path=" + missing});
  EXPECT_EQ(data.exit_code, 2) << data.err;
  EXPECT_NE(data.err.find("cannot open the digits data " + missing), std::string::npos) << data.err;

  const fs::path bad = work_ / "bad.csv";
  std::ofstream(bad) << "1,2,3\n";
  auto env = kEnv;
  env["RING_DIGITS_PATH"] = bad.string();
  auto malformed = RunCommand(Args(10, "malformed", {}), env, 60s);
  EXPECT_EQ(malformed.exit_code, 2) << malformed.err;
  EXPECT_NE(malformed.err.find(bad.string() + ":1: row has 3 fields, expected 65"), std::string::npos)
      << malformed.err;

  env = kEnv;
  env["RING_SEARCHER_METRIC"] = "accuracy";
  auto metric = RunCommand(Args(10, "metric", {}), env, 60s);
  EXPECT_EQ(metric.exit_code, 2) << metric.err;
  EXPECT_NE(metric.err.find("not \"accuracy\": set searcher.metric to one of them"), std::string::npos)
      << metric.err;
}

}  // namespace
