// Searcher operations of the trial runtime against an in-test master over
// real HTTP: the sequence of operations and "done", the after= long poll of
// other ranks, completions (retried, refused, fenced out), the fallback for
// a master without searcher operations, invalid hyperparameters, misuse,
// local mode, and Context::validation_due().
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "ring/trial/trial.h"
#include "unit/cli_fake_master.h"

namespace ring::trial {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using ring::testing::FakeHttpServer;
using ring::testing::FakeRequest;
using ring::testing::FakeResponse;

const std::string kBase = "/api/v1/allocations/3.0";

// A master with a list of operations for the trial: it gives the first one
// not completed, holds `after=` requests (briefly) while that one is the
// operation named, and answers "done" once all are completed. `before`
// injects answers.
struct SearcherMaster {
  std::mutex mutex;
  std::deque<int64_t> operations;  // front: the outstanding one
  std::vector<std::pair<int64_t, double>> completed;
  std::vector<std::string> invalid;                                    // messages
  std::vector<std::tuple<std::string, int64_t, std::string>> metrics;  // kind, batches, metrics JSON
  std::function<std::optional<FakeResponse>(const FakeRequest&)> before;

  FakeResponse Handle(const FakeRequest& req) {
    if (before)
      if (auto r = before(req)) return *r;
    if (req.method == "GET" && req.target.rfind(kBase + "/searcher/operation", 0) == 0) {
      std::optional<int64_t> after;
      if (auto at = req.target.find("after="); at != std::string::npos)
        after = std::stoll(req.target.substr(at + 6));
      for (int i = 0;; ++i) {
        {
          std::lock_guard lock(mutex);
          if (operations.empty()) return {200, R"({"operation":null,"done":true})"};
          if (!after || operations.front() > *after)
            return {200,
                    nlohmann::json{{"operation", {{"length", operations.front()}}}, {"done", false}}.dump()};
          if (i == 5) return {200, R"({"operation":null,"done":false})"};
        }
        std::this_thread::sleep_for(20ms);  // a short long poll
      }
    }
    if (req.method == "POST" && req.target == kBase + "/searcher/completed") {
      const auto body = nlohmann::json::parse(req.body);
      std::lock_guard lock(mutex);
      const int64_t length = body["length"];
      if (operations.empty() || operations.front() != length) return {200, R"({"accepted":false})"};
      operations.pop_front();
      completed.emplace_back(length, body["metric"].get<double>());
      return {200, R"({"accepted":true})"};
    }
    if (req.method == "POST" && req.target == kBase + "/searcher/invalid_hparams") {
      std::lock_guard lock(mutex);
      invalid.push_back(nlohmann::json::parse(req.body)["message"]);
      return {200, R"({"recorded":true})"};
    }
    if (req.method == "POST" && req.target == kBase + "/metrics") {
      const auto body = nlohmann::json::parse(req.body);
      std::lock_guard lock(mutex);
      for (const auto& r : body["reports"])
        metrics.emplace_back(r["kind"], r["batches"], r["metrics"].dump());
      return {200, R"({"stored":1})"};
    }
    return {404, R"({"error":{"code":"not_found","message":"no such route"}})"};
  }
};

FakeResponse Ended() {
  return {409, R"({"error":{"code":"conflict","message":"allocation 3.0 has ended"}})"};
}

class RuntimeSearcherTest : public ::testing::Test {
 protected:
  Context Cluster(const std::string& url, Environment extra = {}) {
    Environment env = {{"RING_MASTER_URL", url},
                       {"RING_ALLOCATION_ID", "3.0"},
                       {"RING_ALLOCATION_TOKEN", "tok"},
                       {"RING_TRIAL_ID", "3"},
                       {"RING_MAX_LENGTH_BATCHES", "10"},
                       {"RING_API_RETRY_SECONDS", "5"},
                       {"RING_CHECKPOINT_STORAGE", R"({"host_path":"/tmp/ring-searcher-test-unused"})"}};
    for (auto& [k, v] : extra) env[k] = v;
    const char* argv[] = {"trial"};
    return Context::from_environment(1, argv, env, Options());
  }

  Context Local(std::vector<std::string> args, Environment env = {}) {
    args.insert(args.begin(), "trial");
    std::vector<const char*> argv;
    for (auto& a : args) argv.push_back(a.c_str());
    return Context::from_environment(static_cast<int>(argv.size()), argv.data(), env, Options());
  }

  ContextOptions Options() {
    ContextOptions o;
    o.local_out = &out_;
    o.diagnostics = &diagnostics_;
    o.reporter.warn = [](const std::string&) {};
    o.reporter.close_timeout = 2s;
    return o;
  }

  // "METHOD target" of the searcher calls the master received, in order.
  static std::vector<std::string> SearcherCalls(const FakeHttpServer& master) {
    std::vector<std::string> calls;
    for (const auto& r : master.requests())
      if (r.target.find("/searcher/") != std::string::npos)
        calls.push_back(r.method + " " + r.target.substr(kBase.size()));
    return calls;
  }

  std::ostringstream out_;
  std::ostringstream diagnostics_;
};

using Calls = std::vector<std::string>;

TEST_F(RuntimeSearcherTest, TheChiefRunsTheOperationsInOrderUntilTheSearcherIsDone) {
  SearcherMaster m;
  m.operations = {50, 200, 800};
  FakeHttpServer master([&](const FakeRequest& req) { return m.Handle(req); });
  auto ctx = Cluster(master.url());
  EXPECT_EQ(ctx.searcher().metric_name(), "validation_loss");
  std::vector<int64_t> lengths;
  for (auto& op : ctx.searcher().operations()) {
    lengths.push_back(op.length());
    const double v = 1.0 / static_cast<double>(op.length());
    ctx.report_training_metrics(op.length(), {{"loss", v}});
    if (op.length() == 50) ctx.report_validation_metrics(50, {{"validation_loss", v}, {"accuracy", 0.5}});
    if (op.length() == 800) ctx.report_validation_metrics(800, {{"accuracy", 0.9}});  // without the metric
    op.report_completed(v);
  }
  EXPECT_EQ(lengths, (std::vector<int64_t>{50, 200, 800}));
  EXPECT_FALSE(ctx.searcher().next_operation()) << "done stays done";
  EXPECT_EQ(SearcherCalls(master),
            (Calls{"GET /searcher/operation", "POST /searcher/completed",
                   "GET /searcher/operation?after=50&timeout_s=30", "POST /searcher/completed",
                   "GET /searcher/operation?after=200&timeout_s=30", "POST /searcher/completed",
                   "GET /searcher/operation?after=800&timeout_s=30"}));
  std::lock_guard lock(m.mutex);
  EXPECT_EQ(m.completed,
            (std::vector<std::pair<int64_t, double>>{{50, 1.0 / 50}, {200, 1.0 / 200}, {800, 1.0 / 800}}));
  // The metric is a validation metric at every length, reported once: the
  // user's report at 50 had it; at 200 there was none; at 800 it lacked it.
  using Metrics = std::vector<std::tuple<std::string, int64_t, std::string>>;
  Metrics validations;
  for (const auto& r : m.metrics)
    if (std::get<0>(r) == "validation") validations.push_back(r);
  EXPECT_EQ(validations, (Metrics{{"validation", 50, R"({"accuracy":0.5,"validation_loss":0.02})"},
                                  {"validation", 200, R"({"validation_loss":0.005})"},
                                  {"validation", 800, R"({"accuracy":0.9})"},
                                  {"validation", 800, R"({"validation_loss":0.00125})"}}));
  EXPECT_NE(diagnostics_.str().find("did not include the searcher metric validation_loss"), std::string::npos)
      << diagnostics_.str();
  for (const auto& r : master.requests()) EXPECT_EQ(r.headers.at("authorization"), "Bearer tok");
}

TEST_F(RuntimeSearcherTest, ACompletionArrivesAfterTheValidationItWasMadeOn) {
  SearcherMaster m;
  m.operations = {5};
  std::atomic<bool> slow_metrics{true};
  m.before = [&](const FakeRequest& req) -> std::optional<FakeResponse> {
    // The first metrics request fails: the completion must wait for its retry.
    if (req.target == kBase + "/metrics" && slow_metrics.exchange(false)) return FakeResponse{503, "{}"};
    return std::nullopt;
  };
  FakeHttpServer master([&](const FakeRequest& req) { return m.Handle(req); });
  auto ctx = Cluster(master.url());
  auto op = ctx.searcher().next_operation();
  ASSERT_TRUE(op);
  ctx.report_validation_metrics(5, {{"validation_loss", 0.25}});
  op->report_completed(0.25);
  std::vector<std::string> order;
  for (const auto& r : master.requests())
    if (r.method == "POST") order.push_back(r.target.substr(kBase.size()));
  EXPECT_EQ(order, (Calls{"/metrics", "/metrics", "/searcher/completed"}));
}

TEST_F(RuntimeSearcherTest, OtherRanksWaitWithAfterUntilTheChiefCompletedAndPostNothing) {
  SearcherMaster m;
  m.operations = {50, 200};
  std::atomic<int> waits{0};
  m.before = [&](const FakeRequest& req) -> std::optional<FakeResponse> {
    // The chief's completion of 50 arrives while rank 1 waits on its third poll.
    if (req.target.find("after=50") != std::string::npos && ++waits == 3) {
      std::lock_guard lock(m.mutex);
      m.operations.pop_front();
    }
    return std::nullopt;
  };
  FakeHttpServer master([&](const FakeRequest& req) { return m.Handle(req); });
  auto ctx = Cluster(master.url(), {{"RANK", "1"}, {"WORLD_SIZE", "2"}});
  auto first = ctx.searcher().next_operation();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->length(), 50);
  ctx.report_validation_metrics(50, {{"validation_loss", 0.5}});
  first->report_completed(0.5);
  const auto started = std::chrono::steady_clock::now();
  auto second = ctx.searcher().next_operation();
  ASSERT_TRUE(second);
  EXPECT_EQ(second->length(), 200);
  EXPECT_EQ(waits.load(), 3);
  EXPECT_GE(std::chrono::steady_clock::now() - started, 2 * 100ms) << "each pending answer came after a hold";
  second->report_completed(0.25);
  {
    std::lock_guard lock(m.mutex);
    m.operations.clear();  // the chief completed 200: done
  }
  EXPECT_FALSE(ctx.searcher().next_operation());
  EXPECT_EQ(
      SearcherCalls(master),
      (Calls{"GET /searcher/operation", "GET /searcher/operation?after=50&timeout_s=30",
             "GET /searcher/operation?after=50&timeout_s=30", "GET /searcher/operation?after=50&timeout_s=30",
             "GET /searcher/operation?after=200&timeout_s=30"}));
  for (const auto& r : master.requests()) EXPECT_NE(r.target, kBase + "/metrics") << "only the chief reports";
}

TEST_F(RuntimeSearcherTest, AMasterThatAnswersPendingAtOnceIsNotAskedInATightLoop) {
  std::atomic<int> polls{0};
  FakeHttpServer master([&](const FakeRequest& req) {
    if (req.target == kBase + "/searcher/operation")
      return FakeResponse{200, R"({"operation":{"length":4},"done":false})"};
    if (req.target.find("after=4") == std::string::npos) return FakeResponse{404, "{}"};
    return ++polls < 4 ? FakeResponse{200, R"({"operation":null,"done":false})"}
                       : FakeResponse{200, R"({"operation":null,"done":true})"};
  });
  auto ctx = Cluster(master.url(), {{"RANK", "1"}, {"WORLD_SIZE", "2"}});
  ctx.searcher().next_operation()->report_completed(1.0);
  const auto started = std::chrono::steady_clock::now();
  EXPECT_FALSE(ctx.searcher().next_operation());
  EXPECT_EQ(polls.load(), 4);
  EXPECT_GE(std::chrono::steady_clock::now() - started, 3 * 450ms);
}

TEST_F(RuntimeSearcherTest, ACompletionIsRetriedOn503UntilTheMasterTakesIt) {
  SearcherMaster m;
  m.operations = {10};
  std::atomic<int> posts{0};
  m.before = [&](const FakeRequest& req) -> std::optional<FakeResponse> {
    if (req.target == kBase + "/searcher/completed" && ++posts <= 2)
      return FakeResponse{503, R"({"error":{"code":"unavailable","message":"restarting"}})"};
    return std::nullopt;
  };
  FakeHttpServer master([&](const FakeRequest& req) { return m.Handle(req); });
  auto ctx = Cluster(master.url());
  auto op = ctx.searcher().next_operation();
  ASSERT_TRUE(op);
  op->report_completed(0.125);
  EXPECT_EQ(posts.load(), 3);
  std::vector<std::string> bodies;
  for (const auto& r : master.requests())
    if (r.target == kBase + "/searcher/completed") bodies.push_back(r.body);
  EXPECT_EQ(bodies, (Calls(3, R"({"length":10,"metric":0.125})")));
  std::lock_guard lock(m.mutex);
  EXPECT_EQ(m.completed, (std::vector<std::pair<int64_t, double>>{{10, 0.125}}));
}

TEST_F(RuntimeSearcherTest, ACompletionTheMasterAlreadyTookIsNoError) {
  FakeHttpServer master([](const FakeRequest& req) {
    if (req.target == kBase + "/searcher/operation")
      return FakeResponse{200, R"({"operation":{"length":7},"done":false})"};
    if (req.target == kBase + "/searcher/completed") return FakeResponse{200, R"({"accepted":false})"};
    if (req.target.find("after=7") != std::string::npos)
      return FakeResponse{200, R"({"operation":null,"done":true})"};
    return FakeResponse{200, R"({"stored":1})"};
  });
  auto ctx = Cluster(master.url());
  ctx.searcher().next_operation()->report_completed(0.5);
  EXPECT_FALSE(ctx.searcher().next_operation());
  EXPECT_NE(diagnostics_.str().find("had already taken the completion"), std::string::npos)
      << diagnostics_.str();
}

TEST_F(RuntimeSearcherTest, AnEndedAllocationStopsTheTrialOnEveryCall) {
  {
    FakeHttpServer master([](const FakeRequest&) { return Ended(); });
    auto ctx = Cluster(master.url());
    EXPECT_THROW(ctx.searcher().next_operation(), AllocationEndedError);
    EXPECT_THROW(ctx.searcher().report_invalid_hparams("bad"), AllocationEndedError);
    EXPECT_EQ(master.requests().size(), 2u) << "a 409 is not retried";
  }
  {
    SearcherMaster m;
    m.operations = {10};
    m.before = [](const FakeRequest& req) -> std::optional<FakeResponse> {
      if (req.target == kBase + "/searcher/completed")
        return FakeResponse{401, R"({"error":{"code":"unauthenticated","message":"wrong token"}})"};
      return std::nullopt;
    };
    FakeHttpServer master([&](const FakeRequest& req) { return m.Handle(req); });
    auto ctx = Cluster(master.url());
    auto op = ctx.searcher().next_operation();
    ASSERT_TRUE(op);
    try {
      op->report_completed(0.5);
      ADD_FAILURE() << "no AllocationEndedError";
    } catch (const AllocationEndedError& e) {
      EXPECT_NE(std::string(e.what()).find("completion of the operation to 10 batches"), std::string::npos)
          << e.what();
    }
  }
}

TEST_F(RuntimeSearcherTest, AMasterThatStaysAwayMakesTheTrialGiveUp) {
  std::atomic<int> gets{0};
  FakeHttpServer master([&](const FakeRequest&) {
    ++gets;
    return FakeResponse{503, R"({"error":{"code":"unavailable","message":"down"}})"};
  });
  auto ctx = Cluster(master.url(), {{"RING_API_RETRY_SECONDS", "1"}});
  const auto started = std::chrono::steady_clock::now();
  EXPECT_THROW(ctx.searcher().next_operation(), MasterUnreachableError);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
  EXPECT_GE(gets.load(), 2);
}

TEST_F(RuntimeSearcherTest, AMasterWithoutSearcherOperationsGetsOneOperationOfMaxLength) {
  SearcherMaster m;  // no searcher routes: 404
  m.before = [](const FakeRequest& req) -> std::optional<FakeResponse> {
    if (req.target.find("/searcher/") != std::string::npos)
      return FakeResponse{404, R"({"error":{"code":"not_found","message":"no such route"}})"};
    return std::nullopt;
  };
  FakeHttpServer master([&](const FakeRequest& req) { return m.Handle(req); });
  auto ctx = Cluster(master.url(), {{"RING_SEARCHER_METRIC", "error_rate"}});
  int ops = 0;
  for (auto& op : ctx.searcher().operations()) {
    ++ops;
    EXPECT_EQ(op.length(), 10);  // RING_MAX_LENGTH_BATCHES
    op.report_completed(0.75);   // not reported as validation by the user: the runtime does
  }
  EXPECT_EQ(ops, 1);
  EXPECT_FALSE(ctx.searcher().next_operation());
  EXPECT_EQ(SearcherCalls(master), (Calls{"GET /searcher/operation"}))
      << "asked once, completed by the metric";
  std::lock_guard lock(m.mutex);
  using Metrics = std::vector<std::tuple<std::string, int64_t, std::string>>;
  EXPECT_EQ(m.metrics, (Metrics{{"validation", 10, R"({"error_rate":0.75})"}}));
}

TEST_F(RuntimeSearcherTest, InvalidHyperparametersAreReportedByTheChiefOnly) {
  SearcherMaster m;
  FakeHttpServer master([&](const FakeRequest& req) { return m.Handle(req); });
  {
    auto ctx = Cluster(master.url(), {{"RANK", "1"}, {"WORLD_SIZE", "2"}});
    ctx.searcher().report_invalid_hparams("learning_rate must be positive");
    EXPECT_TRUE(master.requests().empty());
  }
  auto ctx = Cluster(master.url());
  ctx.searcher().report_invalid_hparams("learning_rate must be positive");
  ASSERT_EQ(master.requests().size(), 1u);
  EXPECT_EQ(master.requests()[0].body, R"({"message":"learning_rate must be positive"})");
  std::lock_guard lock(m.mutex);
  EXPECT_EQ(m.invalid, (std::vector<std::string>{"learning_rate must be positive"}));
}

TEST_F(RuntimeSearcherTest, OperationsMustBeCompletedOneAtATime) {
  SearcherMaster m;
  m.operations = {10, 20};
  FakeHttpServer master([&](const FakeRequest& req) { return m.Handle(req); });
  auto ctx = Cluster(master.url());
  auto op = ctx.searcher().next_operation();
  ASSERT_TRUE(op);
  try {
    ctx.searcher().next_operation();
    ADD_FAILURE() << "no TrialError";
  } catch (const TrialError& e) {
    EXPECT_NE(std::string(e.what()).find("before the operation to 10 batches was completed"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(op->report_completed(NAN), MetricsError);
  EXPECT_THROW(op->report_completed(INFINITY), MetricsError);
  op->report_completed(0.5);
  EXPECT_THROW(op->report_completed(0.5), TrialError) << "completed once";
  // The range form: leaving the body without completing fails on the next step.
  auto range = ctx.searcher().operations();
  auto it = range.begin();
  ASSERT_FALSE(it == range.end());
  EXPECT_EQ(it->length(), 20);
  EXPECT_THROW(++it, TrialError);
  it->report_completed(0.25);
  ++it;
  EXPECT_TRUE(it == range.end());
  std::lock_guard lock(m.mutex);
  EXPECT_EQ(m.completed, (std::vector<std::pair<int64_t, double>>{{10, 0.5}, {20, 0.25}}));
}

TEST_F(RuntimeSearcherTest, AMalformedAnswerIsAnError) {
  FakeHttpServer master([](const FakeRequest&) { return FakeResponse{200, R"({"operation":{"len":3}})"}; });
  auto ctx = Cluster(master.url());
  try {
    ctx.searcher().next_operation();
    ADD_FAILURE() << "no TrialError";
  } catch (const TrialError& e) {
    EXPECT_NE(std::string(e.what()).find("malformed"), std::string::npos) << e.what();
  }
}

TEST_F(RuntimeSearcherTest, LocalModeHasOneOperationOfTheBatchesFlag) {
  auto ctx = Local({"--batches", "7"}, {{"RING_SEARCHER_METRIC", "error_rate"}});
  EXPECT_EQ(ctx.searcher().metric_name(), "error_rate");
  std::vector<int64_t> lengths;
  for (auto& op : ctx.searcher().operations()) {
    lengths.push_back(op.length());
    ctx.report_validation_metrics(7, {{"error_rate", 0.5}});
    op.report_completed(0.5);
  }
  EXPECT_EQ(lengths, (std::vector<int64_t>{7}));
  EXPECT_FALSE(ctx.searcher().next_operation());
  ctx.searcher().report_invalid_hparams("momentum must be below 1");
  EXPECT_EQ(out_.str(),
            "[ring.trial] validation batches=7 error_rate=0.5\n"
            "[ring.trial] searcher operation length=7 completed error_rate=0.5\n"
            "[ring.trial] invalid hyperparameters: momentum must be below 1\n");

  auto plain = Local({});
  EXPECT_EQ(plain.searcher().metric_name(), "validation_loss");
  auto op = plain.searcher().next_operation();
  ASSERT_TRUE(op);
  EXPECT_EQ(op->length(), 100);  // the default of --batches
}

class ValidationDueTest : public RuntimeSearcherTest {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("runtime-validation-due-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  Context WithPeriod(const std::string& period, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--checkpoint-dir", root_.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return Local(args, {{"RING_MIN_VALIDATION_PERIOD_BATCHES", period}});
  }

  fs::path root_;
};

TEST_F(ValidationDueTest, NeverWithoutAPeriod) {
  auto ctx = Local({});
  EXPECT_FALSE(ctx.validation_due(0));
  EXPECT_FALSE(ctx.validation_due(1000000));
  auto zero = WithPeriod("0");
  EXPECT_FALSE(zero.validation_due(1000000));
  // Checkpoints then carry nothing extra.
  const auto uuid = zero.checkpoints().save(5, [](const fs::path&) {}, {{"note", "x"}});
  auto again = WithPeriod("0", {"--resume", (root_ / uuid).string()});
  EXPECT_EQ(again.checkpoints().latest_verified()->metadata, (nlohmann::json{{"note", "x"}}));
}

TEST_F(ValidationDueTest, CountsFromTheLastValidationReport) {
  auto ctx = WithPeriod("100");
  EXPECT_FALSE(ctx.validation_due(99));
  EXPECT_TRUE(ctx.validation_due(100)) << "from the start";
  ctx.report_training_metrics(150, {{"loss", 1.0}});  // training reports do not count
  EXPECT_TRUE(ctx.validation_due(150));
  ctx.report_validation_metrics(150, {{"validation_loss", 1.0}});
  EXPECT_FALSE(ctx.validation_due(249));
  EXPECT_TRUE(ctx.validation_due(250));
  ctx.report_validation_metrics(240, {{"validation_loss", NAN}});  // left out: no validation
  EXPECT_TRUE(ctx.validation_due(250));
  // A completion's own validation report counts too.
  auto op = ctx.searcher().next_operation();
  ASSERT_TRUE(op);
  ASSERT_EQ(op->length(), 100);
  op->report_completed(0.5);
  EXPECT_FALSE(ctx.validation_due(199));
  EXPECT_TRUE(ctx.validation_due(200));
  EXPECT_THROW(WithPeriod("-1"), ConfigError);
}

TEST_F(ValidationDueTest, AResumedRunCountsFromTheLastValidationBeforeItsCheckpoint) {
  std::string uuid;
  {
    auto ctx = WithPeriod("100");
    ctx.report_validation_metrics(150, {{"validation_loss", 1.0}});
    uuid = ctx.checkpoints().save(210, [](const fs::path& dir) { std::ofstream(dir / "state") << "s"; },
                                  {{"note", "x"}});
  }
  auto resumed = WithPeriod("100", {"--resume", (root_ / uuid).string()});
  const auto info = resumed.checkpoints().latest_verified();
  ASSERT_TRUE(info);
  EXPECT_EQ(info->metadata, (nlohmann::json{{"note", "x"}, {"ring_last_validation_batches", 150}}));
  EXPECT_FALSE(resumed.validation_due(249)) << "as if it had not been interrupted";
  EXPECT_TRUE(resumed.validation_due(250));
}

}  // namespace
}  // namespace ring::trial
