// HttpMetricsSink against an in-test HTTP server: request shape, token, and
// how each answer maps to an outcome.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "http_metrics_sink.h"
#include "ring/trial/errors.h"
#include "tests/support/fake_http_server.h"

namespace ring::trial {
namespace {

using ring::testing::FakeHttpServer;
using ring::testing::FakeResponse;

std::vector<MetricReport> Batch() {
  return {{MetricKind::kTraining, 50, {{"loss", 0.5}}},
          {MetricKind::kValidation, 100, {{"validation_loss", 0.25}}}};
}

TEST(RuntimeHttpSinkTest, PostsReportsWithTheAllocationToken) {
  FakeHttpServer server([](const auto&) { return FakeResponse{200, R"({"stored":2})"}; });
  HttpMetricsSink sink(server.url(), "7.0", "tok123");
  auto result = sink.send(Batch());
  EXPECT_EQ(result.outcome, SendOutcome::kAcknowledged);
  auto requests = server.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].method, "POST");
  EXPECT_EQ(requests[0].target, "/api/v1/allocations/7.0/metrics");
  EXPECT_EQ(requests[0].headers["authorization"], "Bearer tok123");
  auto body = nlohmann::json::parse(requests[0].body);
  ASSERT_EQ(body["reports"].size(), 2u);
  EXPECT_EQ(body["reports"][0]["kind"], "training");
  EXPECT_EQ(body["reports"][0]["batches"], 50);
  EXPECT_EQ(body["reports"][0]["metrics"]["loss"], 0.5);
  EXPECT_EQ(body["reports"][1]["kind"], "validation");
}

TEST(RuntimeHttpSinkTest, MapsStatusesToOutcomes) {
  int status = 500;
  FakeHttpServer server([&](const auto&) {
    return FakeResponse{status, R"({"error":{"code":"x","message":"because"}})"};
  });
  HttpMetricsSink sink(server.url(), "7.0", "t");
  auto r = sink.send(Batch());
  EXPECT_EQ(r.outcome, SendOutcome::kTransientFailure);
  status = 409;
  r = sink.send(Batch());
  EXPECT_EQ(r.outcome, SendOutcome::kAllocationEnded);
  EXPECT_NE(r.message.find("because"), std::string::npos);
  status = 401;
  EXPECT_EQ(sink.send(Batch()).outcome, SendOutcome::kAllocationEnded);
  status = 400;
  EXPECT_EQ(sink.send(Batch()).outcome, SendOutcome::kRejected);
  status = 503;
  EXPECT_EQ(sink.send(Batch()).outcome, SendOutcome::kTransientFailure);
}

TEST(RuntimeHttpSinkTest, UnreachableMasterIsTransient) {
  const ring::testing::HeldPort closed;
  HttpMetricsSink sink("http://127.0.0.1:" + std::to_string(closed.port()), "1.0", "t");
  EXPECT_EQ(sink.send(Batch()).outcome, SendOutcome::kTransientFailure);
}

TEST(RuntimeHttpSinkTest, BadUrlIsAConfigError) {
  EXPECT_THROW(HttpMetricsSink("ftp://x", "1.0", "t"), ConfigError);
}

}  // namespace
}  // namespace ring::trial
