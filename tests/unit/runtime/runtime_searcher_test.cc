// Searcher operations of the trial runtime against an in-test master over
// real HTTP: the sequence of operations and "done", completions after the
// metrics they rest on, the after= wait of other ranks, invalid
// hyperparameters, misuse, and local mode.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tests/unit/runtime/runtime_searcher_fixture.h"

namespace ring::trial {
namespace {

using namespace searcher_testing;

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

}  // namespace
}  // namespace ring::trial
