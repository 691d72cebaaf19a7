// The quadratic example driven by searcher operations, as real processes
// against an in-test master: one process through several operations ends
// with the same state as one operation to the last length, and a trial
// restarted between operations (after a crash before its completion arrived,
// and again when promoted later) ends bit for bit like the uninterrupted run;
// with min_validation_period a resumed run validates where the whole one did.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/fake_http_server.h"
#include "tests/unit/runtime/issued_uuids.h"
#include "tests/unit/runtime/runtime_quadratic_fixture.h"

namespace {

using namespace ring::trial::quadratic_testing;
using ring::testing::FakeHttpServer;
using ring::testing::FakeRequest;
using ring::testing::FakeResponse;

constexpr const char* kSearchSeed = "11";
constexpr const char* kHparamsJson =
    R"({"learning_rate":0.02,"batch_size":32,"report_every":25,"momentum":0.5})";

std::string Format(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// Stores metrics and checkpoints of every allocation, never preempts, and
// gives the operations in `operations` (front: the outstanding one) until
// none is left ("done"; a test adds a promotion before the next attempt).
struct SearchMaster {
  using Completion = std::tuple<std::string, int64_t, double>;  // allocation, length, metric

  std::mutex mutex;
  std::deque<int64_t> operations;
  std::vector<Completion> completions;
  std::map<std::string, nlohmann::json> checkpoints;  // by uuid
  // Per allocation: "checkpoint N" and "[ring.trial] <kind> batches=N name=value" as local mode prints them.
  std::map<std::string, std::vector<std::string>> events;
  std::function<std::optional<FakeResponse>(const std::string& allocation, const FakeRequest&)> before;

  FakeResponse Handle(const FakeRequest& req) {
    const std::string prefix = "/api/v1/allocations/";
    if (req.target.rfind(prefix, 0) != 0) return {404, "{}"};
    const auto slash = req.target.find('/', prefix.size());
    const std::string allocation = req.target.substr(prefix.size(), slash - prefix.size());
    const std::string path = req.target.substr(slash);
    if (before)
      if (auto r = before(allocation, req)) return *r;
    std::lock_guard lock(mutex);
    if (path == "/metrics") {
      const auto body = nlohmann::json::parse(req.body);
      for (const auto& r : body["reports"]) {
        std::string line = "[ring.trial] " + r["kind"].get<std::string>() +
                           " batches=" + std::to_string(r["batches"].get<int64_t>());
        for (const auto& [name, value] : r["metrics"].items())
          line += " " + name + "=" + Format(value.get<double>());
        events[allocation].push_back(line);
      }
      return {200, R"({"stored":1})"};
    }
    if (req.method == "POST" && path == "/checkpoints/prepare")
      return {201, ring::trial::testing_uuids::IssuedUuidBody()};
    if (req.method == "POST" && path == "/checkpoints") {
      const auto body = nlohmann::json::parse(req.body);
      checkpoints[body["uuid"]] = body;
      events[allocation].push_back("checkpoint " + std::to_string(body["batches"].get<int64_t>()));
      return {201, "{}"};
    }
    if (req.method == "GET" && path.rfind("/checkpoints/", 0) == 0) {
      auto it = checkpoints.find(path.substr(13));
      return it == checkpoints.end() ? FakeResponse{404, "{}"} : FakeResponse{200, it->second.dump()};
    }
    if (path.rfind("/preemption?", 0) == 0) return {200, R"({"preempt":false})"};
    if (req.method == "GET" && path.rfind("/searcher/operation", 0) == 0) {
      std::optional<int64_t> after;
      if (auto at = path.find("after="); at != std::string::npos) after = std::stoll(path.substr(at + 6));
      if (operations.empty()) return {200, R"({"operation":null,"done":true})"};
      if (after && operations.front() <= *after) return {200, R"({"operation":null,"done":false})"};
      return {200, nlohmann::json{{"operation", {{"length", operations.front()}}}, {"done", false}}.dump()};
    }
    if (req.method == "POST" && path == "/searcher/completed") {
      const auto body = nlohmann::json::parse(req.body);
      const int64_t length = body["length"];
      if (operations.empty() || operations.front() != length) return {200, R"({"accepted":false})"};
      operations.pop_front();
      completions.emplace_back(allocation, length, body["metric"].get<double>());
      return {200, R"({"accepted":true})"};
    }
    return {404, "{}"};
  }

  // The events of one allocation that start with `start`.
  std::vector<std::string> Events(const std::string& allocation, const std::string& start) {
    std::lock_guard lock(mutex);
    std::vector<std::string> out;
    for (const auto& e : events[allocation])
      if (e.rfind(start, 0) == 0) out.push_back(e);
    return out;
  }
};

class QuadraticSearcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    work_ = fs::temp_directory_path() / ("quadratic-searcher-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(work_);
    fs::create_directories(work_);
  }
  void TearDown() override { fs::remove_all(work_); }

  // Runs one attempt of trial 9 under `master` with checkpoints in `storage`; its exit code.
  int Attempt(const FakeHttpServer& master, const std::string& allocation, const fs::path& storage,
              const fs::path& resume = {}) {
    std::map<std::string, std::string> env = {
        {"RING_MASTER_URL", master.url()},
        {"RING_ALLOCATION_ID", allocation},
        {"RING_ALLOCATION_TOKEN", "tok"},
        {"RING_TRIAL_ID", "9"},
        {"RING_MAX_LENGTH_BATCHES", "800"},
        {"RING_TRIAL_SEED", kSearchSeed},
        {"RING_SEARCHER_METRIC", "validation_loss"},
        {"RING_API_RETRY_SECONDS", "5"},
        {"RING_CHECKPOINT_STORAGE",
         nlohmann::json{{"type", "shared_fs"}, {"host_path", storage.string()}}.dump()},
        {"RING_HPARAMS", kHparamsJson}};
    if (!resume.empty()) env["RING_LATEST_CHECKPOINT"] = resume.string();
    Trial trial(work_, {}, env);
    const int code = trial.ExitCode();
    last_out_ = trial.out();
    last_err_ = trial.err();
    return code;
  }

  fs::path work_;
  std::string last_out_, last_err_;
};

using Completions = std::vector<SearchMaster::Completion>;

TEST_F(QuadraticSearcherTest, OneProcessThroughSeveralOperationsEndsLikeOneOperationToTheLast) {
  // The reference: 800 batches in one operation (local mode).
  Trial single(work_, {"--hparam", "learning_rate=0.02", "--hparam", "batch_size=32", "--hparam",
                       "report_every=25", "--hparam", "momentum=0.5", "--batches", "800", "--seed",
                       kSearchSeed, "--checkpoint-dir", (work_ / "single").string()});
  ASSERT_EQ(single.ExitCode(), 0) << single.err();
  const auto reference = Checkpoints(work_ / "single");

  SearchMaster registry;
  registry.operations = {50, 200, 800};
  FakeHttpServer master([&](const FakeRequest& req) { return registry.Handle(req); });
  ASSERT_EQ(Attempt(master, "8.0", work_ / "shared"), 0) << last_err_;

  // Each operation completed with the validation loss reported at its length.
  std::vector<int64_t> lengths;
  for (const auto& [allocation, length, metric] : registry.completions) {
    lengths.push_back(length);
    const auto at = registry.Events("8.0", "[ring.trial] validation batches=" + std::to_string(length) + " ");
    ASSERT_EQ(at.size(), 1u) << "validated once at " << length;
    EXPECT_EQ(at[0], "[ring.trial] validation batches=" + std::to_string(length) +
                         " validation_loss=" + Format(metric));
  }
  EXPECT_EQ(lengths, (std::vector<int64_t>{50, 200, 800}));
  EXPECT_EQ("validation_loss=" + Format(std::get<2>(registry.completions.back())),
            FinalValidationLoss(single.out()));
  // The same training curve: the operations end on multiples of report_every.
  std::vector<std::string> local_training;
  for (const auto& line : MetricLinesAfter(single.out(), 0))
    if (line.rfind("[ring.trial] training", 0) == 0) local_training.push_back(line);
  EXPECT_EQ(local_training.size(), 32u);
  EXPECT_EQ(registry.Events("8.0", "[ring.trial] training"), local_training);
  // Checkpoints at the end of every operation and every 100 batches; those
  // both runs have hold the same bytes, the final one included.
  const auto saved = Checkpoints(work_ / "shared");
  std::vector<int64_t> at;
  for (const auto& [batches, dir] : saved) at.push_back(batches);
  EXPECT_EQ(at, (std::vector<int64_t>{50, 100, 200, 300, 400, 500, 600, 700, 800}));
  for (const auto& [batches, dir] : reference)
    EXPECT_EQ(Files(saved.at(batches)), Files(dir)) << "checkpoint at " << batches << " differs";
}

TEST_F(QuadraticSearcherTest, RestartedBetweenOperationsEndsBitForBitLikeTheUninterruptedRun) {
  // The reference: one process through 50, 200 and 800.
  SearchMaster whole;
  whole.operations = {50, 200, 800};
  {
    FakeHttpServer master([&](const FakeRequest& req) { return whole.Handle(req); });
    ASSERT_EQ(Attempt(master, "8.0", work_ / "whole"), 0) << last_err_;
  }
  const auto reference = Checkpoints(work_ / "whole");

  SearchMaster registry;
  registry.operations = {50, 200};
  // The allocation ends just as the trial reports completing 200 (after its checkpoint).
  registry.before = [](const std::string& allocation, const FakeRequest& req) -> std::optional<FakeResponse> {
    if (allocation == "9.0" && req.target.find("/searcher/completed") != std::string::npos &&
        req.body.find("\"length\":200") != std::string::npos)
      return FakeResponse{409, R"({"error":{"code":"conflict","message":"allocation 9.0 has ended"}})"};
    return std::nullopt;
  };
  FakeHttpServer master([&](const FakeRequest& req) { return registry.Handle(req); });
  const fs::path storage = work_ / "shared";
  ASSERT_EQ(Attempt(master, "9.0", storage), 5) << last_err_;
  EXPECT_EQ(registry.Events("9.0", "checkpoint"),
            (std::vector<std::string>{"checkpoint 50", "checkpoint 100", "checkpoint 200"}));
  const fs::path at_200 = Checkpoints(storage).at(200);

  // The next attempt resumes exactly at the end of the operation not completed:
  // it validates again, completes it without training, and has nothing more.
  ASSERT_EQ(Attempt(master, "9.1", storage, at_200), 0) << last_err_;
  EXPECT_TRUE(registry.Events("9.1", "checkpoint").empty()) << "the state at 200 is already saved";
  EXPECT_TRUE(registry.Events("9.1", "[ring.trial] training").empty()) << "no training";
  EXPECT_EQ(registry.Events("9.1", "[ring.trial] validation"),
            whole.Events("8.0", "[ring.trial] validation batches=200 "));

  // Promoted later: the third attempt trains from 200 to 800.
  {
    std::lock_guard lock(registry.mutex);
    registry.operations.push_back(800);
  }
  ASSERT_EQ(Attempt(master, "9.2", storage, at_200), 0) << last_err_;
  EXPECT_NE(last_out_.find("resumed from checkpoint " + at_200.filename().string() + " at batch 200"),
            std::string::npos)
      << last_out_;
  Completions expected;
  for (const auto& [allocation, length, metric] : whole.completions)
    expected.emplace_back(length == 50 ? "9.0" : length == 200 ? "9.1" : "9.2", length, metric);
  EXPECT_EQ(registry.completions, expected) << "the same metrics, bit for bit";
  const auto saved = Checkpoints(storage);
  ASSERT_TRUE(saved.count(800));
  for (const auto& [batches, dir] : saved)
    EXPECT_EQ(Files(dir), Files(reference.at(batches))) << "checkpoint at " << batches << " differs";
  // The last attempt reported exactly what the uninterrupted run did after 200.
  std::vector<std::string> after_200;
  for (const auto& e : whole.Events("8.0", "[ring.trial] "))
    if (std::stoll(e.substr(e.find("batches=") + 8)) > 200) after_200.push_back(e);
  EXPECT_EQ(registry.Events("9.2", "[ring.trial] "), after_200);
}

TEST_F(QuadraticSearcherTest, AResumedRunValidatesWhereTheWholeOneDidUnderMinValidationPeriod) {
  // Validations every 4th report (120, 240, ...) and whenever 70 batches passed since the last one.
  const std::map<std::string, std::string> env = {{"RING_MIN_VALIDATION_PERIOD_BATCHES", "70"}};
  auto args = [&](const std::string& dir, std::vector<std::string> extra) {
    std::vector<std::string> a = {
        "--hparam", "learning_rate=0.02", "--hparam",         "batch_size=32",
        "--hparam", "report_every=30",    "--batches",        "500",
        "--seed",   kSearchSeed,          "--checkpoint-dir", (work_ / dir).string()};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  Trial whole(work_, args("whole", {}), env);
  ASSERT_EQ(whole.ExitCode(), 0) << whole.err();
  std::vector<int64_t> validated;
  for (const auto& line : MetricLinesAfter(whole.out(), 0))
    if (line.rfind("[ring.trial] validation", 0) == 0) validated.push_back(std::stoll(line.substr(32)));
  EXPECT_EQ(validated, (std::vector<int64_t>{70, 120, 190, 240, 310, 360, 430, 480, 500}));
  const auto reference = Checkpoints(work_ / "whole");
  ASSERT_TRUE(reference.count(200));

  // The checkpoint at 200 remembers the validation at 190, so the next one is due at 260 (after 240: 310).
  Trial resumed(work_, args("resumed", {"--resume", reference.at(200).string()}), env);
  ASSERT_EQ(resumed.ExitCode(), 0) << resumed.err();
  EXPECT_EQ(MetricLinesAfter(resumed.out(), 0), MetricLinesAfter(whole.out(), 200));
  const auto saved = Checkpoints(work_ / "resumed");
  ASSERT_TRUE(saved.count(500));
  for (const auto& [batches, dir] : saved)
    EXPECT_EQ(Files(dir), Files(reference.at(batches))) << "checkpoint at " << batches << " differs";
}

}  // namespace
