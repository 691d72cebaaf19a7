// Searcher operations of the trial runtime when things go wrong: completions
// retried and already taken, an ended allocation, a master that stays away,
// one without searcher operations (404), and malformed answers.
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

}  // namespace
}  // namespace ring::trial
