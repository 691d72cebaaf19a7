// The quadratic example run as a real process in local mode: deterministic
// for a seed and hyperparameters, and clear about bad ones.
#include <gtest/gtest.h>

#include <filesystem>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tests/support/fake_http_server.h"
#include "tests/unit/runtime/issued_uuids.h"

namespace {

struct TrialRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// A fresh folder below the test temp dir, removed at exit of the test binary.
std::string TempFolder(const std::string& what) {
  static int folders = 0;
  auto p = std::filesystem::path(::testing::TempDir()) /
           ("quadratic-" + what + "-" + std::to_string(::getpid()) + "-" + std::to_string(++folders));
  std::filesystem::remove_all(p);
  return p.string();
}

TrialRun RunTrial(const std::string& args, const std::string& env = "-u RING_MASTER_URL") {
  // One file per run: ctest runs the tests of this binary in parallel processes.
  static int runs = 0;
  std::string err_path = ::testing::TempDir() + "/quadratic_stderr." + std::to_string(::getpid()) + "." +
                         std::to_string(++runs) + ".txt";
  // Local runs checkpoint every 100 batches by default: keep them out of the working directory.
  std::string ckpt;
  if (env.find("RING_MASTER_URL=") == std::string::npos && args.find("--checkpoint-dir") == std::string::npos)
    ckpt = TempFolder("ckpt");
  std::string cmd = "env " + env + " '" + QUADRATIC_TRIAL_PATH + "' " + args +
                    (ckpt.empty() ? "" : " --checkpoint-dir '" + ckpt + "'") + " 2>'" + err_path + "'";
  TrialRun run;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (!pipe) return run;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) run.out.append(buf.data(), n);
  int status = ::pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::stringstream err;
  err << std::ifstream(err_path).rdbuf();
  run.err = err.str();
  std::remove(err_path.c_str());
  if (!ckpt.empty()) std::filesystem::remove_all(ckpt);
  return run;
}

const char* kGood = "--hparam learning_rate=0.05 --hparam batch_size=32 --hparam report_every=50 ";

// The last validation_loss the runtime printed.
double FinalValidationLoss(const std::string& out) {
  auto pos = out.rfind("validation_loss=");
  if (pos == std::string::npos) return -1;
  return std::stod(out.substr(pos + 16));
}

TEST(QuadraticTrialTest, SameSeedAndHparamsGiveTheSameOutput) {
  TrialRun a = RunTrial(std::string(kGood) + "--batches 300 --seed 7");
  TrialRun b = RunTrial(std::string(kGood) + "--batches 300 --seed 7");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(a.out, b.out);
  // 300 batches / 50 = 6 training reports; validation at 200 (4th report) and the end.
  EXPECT_NE(a.out.find("[ring.trial] training batches=50 loss="), std::string::npos) << a.out;
  EXPECT_NE(a.out.find("[ring.trial] validation batches=200 validation_loss="), std::string::npos) << a.out;
  EXPECT_NE(a.out.find("[ring.trial] validation batches=300 validation_loss="), std::string::npos) << a.out;
  // The one searcher operation of local mode, completed with the last validation.
  const auto last = a.out.rfind("[ring.trial] validation batches=300 validation_loss=");
  ASSERT_NE(last, std::string::npos);
  const std::string value = a.out.substr(last + 52, a.out.find('\n', last) - last - 52);
  EXPECT_NE(
      a.out.find("[ring.trial] searcher operation length=300 completed validation_loss=" + value + "\n"),
      std::string::npos)
      << a.out;
  // Learns the noise floor (noise 0.1 → MSE 0.01).
  EXPECT_LT(FinalValidationLoss(a.out), 0.05) << a.out;

  TrialRun other = RunTrial(std::string(kGood) + "--batches 300 --seed 8");
  ASSERT_EQ(other.exit_code, 0) << other.err;
  EXPECT_NE(a.out, other.out);
}

TEST(QuadraticTrialTest, MomentumAndFileHparamsWork) {
  std::string path = ::testing::TempDir() + "/quadratic_hparams.json";
  std::ofstream(path) << R"({"learning_rate": 0.01, "batch_size": 16, "report_every": 25, "momentum": 0.9})";
  TrialRun run = RunTrial("--hparams '" + path + "' --batches 100");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("[ring.trial] training batches=25 loss="), std::string::npos) << run.out;
  EXPECT_LT(FinalValidationLoss(run.out), 0.1) << run.out;
}

TEST(QuadraticTrialTest, TinyLearningRateStillRunsButBarelyLearns) {
  TrialRun run =
      RunTrial("--hparam learning_rate=1e-7 --hparam batch_size=32 --hparam report_every=50 --batches 100");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_GT(FinalValidationLoss(run.out), 1.0) << run.out;
}

TEST(QuadraticTrialTest, BadHparamsExitTwoWithAClearMessage) {
  TrialRun zero = RunTrial("--hparam learning_rate=0 --hparam batch_size=32 --hparam report_every=50");
  EXPECT_EQ(zero.exit_code, 2);
  EXPECT_NE(zero.err.find("learning_rate must be a positive number"), std::string::npos) << zero.err;

  TrialRun negative = RunTrial("--hparam learning_rate=-0.1 --hparam batch_size=32 --hparam report_every=50");
  EXPECT_EQ(negative.exit_code, 2);

  TrialRun missing = RunTrial("--hparam learning_rate=0.1 --hparam report_every=50");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("\"batch_size\" is missing"), std::string::npos) << missing.err;

  TrialRun text = RunTrial("--hparam learning_rate=fast --hparam batch_size=32 --hparam report_every=50");
  EXPECT_EQ(text.exit_code, 2);
  EXPECT_NE(text.err.find("\"learning_rate\" must be a number, got \"fast\""), std::string::npos) << text.err;

  TrialRun big_batch =
      RunTrial("--hparam learning_rate=0.1 --hparam batch_size=100000 --hparam report_every=5");
  EXPECT_EQ(big_batch.exit_code, 2);
  EXPECT_NE(big_batch.err.find("batch_size must be between"), std::string::npos) << big_batch.err;
}

TEST(QuadraticTrialTest, TooLargeLearningRateDivergesWithAHint) {
  TrialRun run =
      RunTrial("--hparam learning_rate=50 --hparam batch_size=32 --hparam report_every=10 --batches 200");
  EXPECT_EQ(run.exit_code, 3);
  EXPECT_NE(run.err.find("diverged"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("lower learning_rate"), std::string::npos) << run.err;
}

// A master without searcher operations (404): one operation to max_length,
// completed by the validation metric alone.
TEST(QuadraticTrialTest, ClusterModePostsMetricsToTheMaster) {
  using ring::testing::FakeHttpServer;
  using ring::testing::FakeResponse;
  FakeHttpServer master([](const auto& req) {
    if (req.target.find("/searcher/") != std::string::npos)
      return FakeResponse{404, R"({"error":{"code":"not_found","message":"no such route"}})"};
    if (ring::trial::testing_uuids::IsPrepare(req.target))
      return FakeResponse{201, ring::trial::testing_uuids::IssuedUuidBody()};
    return FakeResponse{200, R"({"stored":1})"};
  });
  const auto storage =
      std::filesystem::temp_directory_path() / ("quadratic-ckpt-" + std::to_string(::getpid()));
  std::string env = "RING_MASTER_URL=" + master.url() + " RING_CHECKPOINT_STORAGE='{\"host_path\":\"" +
                    storage.string() + "\"}'" +
                    " RING_ALLOCATION_ID=4.1 RING_ALLOCATION_TOKEN=tok RING_TRIAL_ID=4 RING_EXPERIMENT_ID=2"
                    " RING_MAX_LENGTH_BATCHES=200 RING_TRIAL_SEED=3"
                    " RING_HPARAMS='{\"learning_rate\":0.05,\"batch_size\":32,\"report_every\":50}'";
  TrialRun run = RunTrial("", env);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("quadratic: trial 4, seed 3, 200 batches"), std::string::npos) << run.out;
  std::vector<std::pair<std::string, int64_t>> reports;
  std::vector<int64_t> checkpoints;
  int searcher_calls = 0;
  for (const auto& req : master.requests()) {
    EXPECT_EQ(req.headers.at("authorization"), "Bearer tok");
    if (req.target.find("/searcher/") != std::string::npos) {
      EXPECT_EQ(req.method + " " + req.target, "GET /api/v1/allocations/4.1/searcher/operation");
      ++searcher_calls;
      continue;
    }
    if (req.target == "/api/v1/allocations/4.1/checkpoints") {
      checkpoints.push_back(nlohmann::json::parse(req.body)["batches"]);  // every checkpoint_every (100)
      continue;
    }
    if (req.target != "/api/v1/allocations/4.1/metrics") continue;  // e.g. the preemption long poll
    auto body = nlohmann::json::parse(req.body);
    for (const auto& r : body["reports"])
      reports.emplace_back(r["kind"].get<std::string>(), r["batches"].get<int64_t>());
  }
  std::sort(reports.begin(), reports.end());
  using Reports = std::vector<std::pair<std::string, int64_t>>;
  EXPECT_EQ(
      reports,
      (Reports{
          {"training", 50}, {"training", 100}, {"training", 150}, {"training", 200}, {"validation", 200}}));
  EXPECT_EQ(checkpoints, (std::vector<int64_t>{100, 200}));
  EXPECT_EQ(searcher_calls, 1) << "asked once, then trained the one operation to max_length";
  std::filesystem::remove_all(storage);
}

TEST(QuadraticTrialTest, BadHparamsAreReportedToTheSearcherUnderAMaster) {
  using ring::testing::FakeHttpServer;
  using ring::testing::FakeResponse;
  FakeHttpServer master([](const auto&) { return FakeResponse{200, R"({"recorded":true})"}; });
  std::string env = "RING_MASTER_URL=" + master.url() +
                    " RING_ALLOCATION_ID=4.1 RING_ALLOCATION_TOKEN=tok RING_TRIAL_ID=4"
                    " RING_MAX_LENGTH_BATCHES=200"
                    " RING_HPARAMS='{\"learning_rate\":0,\"batch_size\":32,\"report_every\":50}'";
  TrialRun run = RunTrial("", env);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("learning_rate must be a positive number"), std::string::npos) << run.err;
  const auto requests = master.requests();
  ASSERT_EQ(requests.size(), 1u) << "nothing else: no training, no checkpoint";
  EXPECT_EQ(requests[0].method + " " + requests[0].target,
            "POST /api/v1/allocations/4.1/searcher/invalid_hparams");
  const auto body = nlohmann::json::parse(requests[0].body);
  EXPECT_NE(body["message"].get<std::string>().find("learning_rate must be a positive number"),
            std::string::npos)
      << body.dump();
}

TEST(QuadraticTrialTest, ATrialForAnotherSearcherMetricSaysWhatToSet) {
  TrialRun run =
      RunTrial(std::string(kGood) + "--batches 10", "-u RING_MASTER_URL RING_SEARCHER_METRIC=accuracy");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("set searcher.metric: validation_loss"), std::string::npos) << run.err;
}

}  // namespace
