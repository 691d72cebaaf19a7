// The quadratic example interrupted and resumed, as real processes: killed
// with SIGKILL after a checkpoint, stopped with SIGTERM anywhere, and
// preempted by an in-test master. Every resumed run must end with the same
// final checkpoint bytes, validation loss and metrics as an uninterrupted run.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
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

constexpr const char* kSeed = "11";
const std::vector<std::string> kHparams = {"--hparam", "learning_rate=0.02", "--hparam", "batch_size=32",
                                           "--hparam", "report_every=25",    "--hparam", "momentum=0.5"};

class QuadraticResumeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    work_ = fs::temp_directory_path() / ("quadratic-resume-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(work_);
    fs::create_directories(work_);
    // The reference: 500 batches in one go.
    Trial whole(work_, Args("whole", {}));
    ASSERT_EQ(whole.ExitCode(), 0) << whole.err();
    whole_out_ = whole.out();
    whole_ = Checkpoints(work_ / "whole");
    ASSERT_EQ(whole_.size(), 5u);  // 100, 200, ..., 500
  }
  void TearDown() override { fs::remove_all(work_); }

  std::vector<std::string> Args(const std::string& dir, std::vector<std::string> extra) {
    std::vector<std::string> args = kHparams;
    for (const char* a : {"--batches", "500", "--seed", kSeed}) args.push_back(a);
    args.push_back("--checkpoint-dir");
    args.push_back((work_ / dir).string());
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }

  // Resumes from `checkpoint` to the end and checks the run against the reference.
  void ResumeAndCompare(const fs::path& checkpoint, int64_t from) {
    Trial resumed(work_, Args("resumed", {"--resume", checkpoint.string()}));
    ASSERT_EQ(resumed.ExitCode(), 0) << resumed.err();
    const std::string out = resumed.out();
    EXPECT_NE(out.find("resumed from checkpoint " + checkpoint.filename().string() + " at batch " +
                       std::to_string(from)),
              std::string::npos)
        << out;
    EXPECT_EQ(MetricLinesAfter(out, from), MetricLinesAfter(whole_out_, from));
    EXPECT_TRUE(MetricLinesAfter(out, 0) == MetricLinesAfter(out, from))
        << "reported before the resume point";
    EXPECT_EQ(FinalValidationLoss(out), FinalValidationLoss(whole_out_));
    auto later = Checkpoints(work_ / "resumed");
    ASSERT_TRUE(later.count(500)) << out;
    // Every checkpoint both runs have (the final one included) holds the same bytes.
    for (const auto& [batches, dir] : later) {
      if (!whole_.count(batches)) continue;
      EXPECT_EQ(Files(dir), Files(whole_.at(batches))) << "checkpoint at " << batches << " differs";
    }
  }

  fs::path work_;
  std::string whole_out_;
  std::map<int64_t, fs::path> whole_;
};

TEST_F(QuadraticResumeTest, KilledAfterACheckpointThenResumedEndsBitForBitTheSame) {
  Trial first(work_, Args("first", {"--hparam", "batch_sleep_ms=4"}));
  ASSERT_TRUE(WaitFor([&] { return Checkpoints(work_ / "first").count(200) > 0; })) << first.err();
  first.Signal(SIGKILL);
  const int status = first.Wait();
  ASSERT_TRUE(WIFSIGNALED(status)) << "the run ended before it could be killed";
  const auto saved = Checkpoints(work_ / "first");
  EXPECT_FALSE(saved.count(500));
  EXPECT_EQ(Files(saved.at(200)), Files(whole_.at(200)));
  ResumeAndCompare(saved.at(200), 200);
}

TEST_F(QuadraticResumeTest, SigtermCheckpointsWhereverItIsAndTheResumedRunMatches) {
  Trial first(work_, Args("first", {"--hparam", "batch_sleep_ms=3"}));
  // Once the first checkpoint exists the trial has long been watching for SIGTERM.
  ASSERT_TRUE(WaitFor([&] { return Checkpoints(work_ / "first").count(100) > 0; })) << first.err();
  std::this_thread::sleep_for(37ms);
  first.Signal(SIGTERM);
  ASSERT_EQ(first.ExitCode(), 0) << first.err();
  const std::string out = first.out();
  auto pos = out.find("asked to stop; checkpointed at batch ");
  ASSERT_NE(pos, std::string::npos) << out;
  const int64_t at = std::stoll(out.substr(pos + 37));
  ASSERT_GT(at, 100);
  ASSERT_LT(at, 500);
  const auto saved = Checkpoints(work_ / "first");
  ASSERT_TRUE(saved.count(at));
  EXPECT_EQ(saved.rbegin()->first, at) << "nothing after the stop";
  ResumeAndCompare(saved.at(at), at);
}

TEST_F(QuadraticResumeTest, ACorruptedCheckpointIsRefusedNamingTheFile) {
  const fs::path copy = work_ / "copy" / whole_.at(300).filename();
  fs::create_directories(copy.parent_path());
  fs::copy(whole_.at(300), copy, fs::copy_options::recursive);
  {
    std::fstream f(copy / "model.bin", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(40);
    f.put('\x7f');
  }
  Trial resumed(work_, Args("resumed", {"--resume", copy.string()}));
  EXPECT_EQ(resumed.ExitCode(), 4);
  EXPECT_NE(resumed.err().find("model.bin is corrupted"), std::string::npos) << resumed.err();
  EXPECT_TRUE(Checkpoints(work_ / "resumed").empty());
}

// A master that stores metrics and checkpoints and asks the trial to stop
// once it reported `stop_after` batches of training.
struct PreemptingMaster {
  std::mutex mutex;
  int64_t reported = 0;
  int64_t stop_after = 0;
  std::map<std::string, nlohmann::json> checkpoints;
  // "<allocation> [ring.trial] <kind> batches=N name=value" as local mode prints them, in arrival order.
  std::vector<std::string> metrics;
  std::vector<std::string> events;  // "checkpoint N", "ack"

  FakeResponse Handle(const FakeRequest& req) {
    std::lock_guard lock(mutex);
    const std::string base = "/api/v1/allocations/" + allocation;
    if (req.target == base + "/metrics") {
      const auto body = nlohmann::json::parse(req.body);
      for (const auto& r : body["reports"]) {
        std::string line = allocation + " [ring.trial] " + r["kind"].get<std::string>() +
                           " batches=" + std::to_string(r["batches"].get<int64_t>());
        for (const auto& [name, value] : r["metrics"].items()) {
          char buf[32];
          std::snprintf(buf, sizeof buf, "%.6g", value.get<double>());
          line += " " + name + "=" + buf;
        }
        metrics.push_back(line);
        reported = std::max(reported, r["batches"].get<int64_t>());
      }
      return {200, R"({"stored":1})"};
    }
    if (req.method == "POST" && req.target == base + "/checkpoints/prepare")
      return {201, ring::trial::testing_uuids::IssuedUuidBody()};
    if (req.method == "POST" && req.target == base + "/checkpoints") {
      auto body = nlohmann::json::parse(req.body);
      checkpoints[body["uuid"]] = body;
      events.push_back("checkpoint " + std::to_string(body["batches"].get<int64_t>()));
      return {201, "{}"};
    }
    if (req.method == "GET" && req.target.rfind(base + "/checkpoints/", 0) == 0) {
      auto it = checkpoints.find(req.target.substr(base.size() + 13));
      return it == checkpoints.end() ? FakeResponse{404, "{}"} : FakeResponse{200, it->second.dump()};
    }
    if (req.target.rfind(base + "/preemption?timeout_s=", 0) == 0)
      return {200, stop_after > 0 && reported >= stop_after ? R"({"preempt":true})" : R"({"preempt":false})"};
    if (req.target == base + "/preemption/ack") {
      events.push_back("ack");
      return {200, "{}"};
    }
    return {404, "{}"};
  }
  std::string allocation = "9.0";
};

TEST_F(QuadraticResumeTest, PreemptedByTheMasterThenResumedFromItsCheckpointMatchesTheLocalRun) {
  PreemptingMaster registry;
  registry.stop_after = 150;
  FakeHttpServer master([&](const FakeRequest& req) { return registry.Handle(req); });
  const fs::path storage = work_ / "shared";
  std::map<std::string, std::string> env = {
      {"RING_MASTER_URL", master.url()},
      {"RING_ALLOCATION_ID", "9.0"},
      {"RING_ALLOCATION_TOKEN", "tok"},
      {"RING_TRIAL_ID", "9"},
      {"RING_MAX_LENGTH_BATCHES", "500"},
      {"RING_TRIAL_SEED", kSeed},
      {"RING_MIN_CHECKPOINT_PERIOD_BATCHES", "100"},
      {"RING_CHECKPOINT_STORAGE",
       nlohmann::json{{"type", "shared_fs"}, {"host_path", storage.string()}}.dump()},
      {"RING_HPARAMS",
       R"({"learning_rate":0.02,"batch_size":32,"report_every":25,"momentum":0.5,"batch_sleep_ms":5})"}};
  Trial first(work_, {}, env);
  ASSERT_EQ(first.ExitCode(), 0) << first.err();

  EXPECT_NE(first.out().find("asked to stop"), std::string::npos) << first.out();
  int64_t stopped_at = 0;
  {
    std::lock_guard lock(registry.mutex);
    ASSERT_GE(registry.events.size(), 2u);
    EXPECT_EQ(registry.events.back(), "ack") << "the acknowledgement comes after the checkpoint";
    const std::string last = registry.events[registry.events.size() - 2];
    ASSERT_EQ(last.rfind("checkpoint ", 0), 0u) << last;
    stopped_at = std::stoll(last.substr(11));
    EXPECT_GE(stopped_at, 150);
    EXPECT_LT(stopped_at, 500);
  }
  const auto saved = Checkpoints(storage);
  ASSERT_TRUE(saved.count(stopped_at));

  // The next attempt resumes from it (RING_LATEST_CHECKPOINT), verified against the registration.
  registry.stop_after = 0;
  registry.allocation = "9.1";
  env["RING_ALLOCATION_ID"] = "9.1";
  env["RING_LATEST_CHECKPOINT"] = saved.at(stopped_at).string();
  env["RING_HPARAMS"] = R"({"learning_rate":0.02,"batch_size":32,"report_every":25,"momentum":0.5})";
  Trial second(work_, {}, env);
  ASSERT_EQ(second.ExitCode(), 0) << second.err();
  const auto all = Checkpoints(storage);
  ASSERT_TRUE(all.count(500));
  EXPECT_EQ(Files(all.at(500)), Files(whole_.at(500)));
  // The second attempt reported exactly what the uninterrupted run did after the
  // stop, and the first attempt nothing twice.
  std::lock_guard lock(registry.mutex);
  std::vector<std::string> first_reports, second_reports;
  for (const auto& m : registry.metrics) {
    if (m.rfind("9.0 ", 0) == 0) first_reports.push_back(m.substr(4));
    if (m.rfind("9.1 ", 0) == 0) second_reports.push_back(m.substr(4));
  }
  auto expected = MetricLinesAfter(whole_out_, stopped_at);
  std::sort(expected.begin(), expected.end());
  std::sort(second_reports.begin(), second_reports.end());
  EXPECT_EQ(second_reports, expected);
  std::sort(first_reports.begin(), first_reports.end());
  EXPECT_TRUE(std::adjacent_find(first_reports.begin(), first_reports.end()) == first_reports.end());
  EXPECT_FALSE(first_reports.empty());
}

}  // namespace
