// `ring webhook ...` against an in-test HTTP server: the body create sends
// (each --trigger as Determined's {trigger_type, condition}), the secret
// printed once, a bad --trigger refused before anything is sent, and a
// test that was not delivered exiting non-zero.
#include <gtest/gtest.h>

#include <cstdlib>

#include <nlohmann/json.hpp>

#include "cli/webhook_commands.h"
#include "tests/support/fake_http_server.h"
#include "tests/unit/cli/cli_result.h"

namespace ring::cli {
namespace {

using ring::testing::FakeHttpServer;
using ring::testing::FakeRequest;
using ring::testing::FakeResponse;

TEST(CliWebhook, CreateSendsTheTriggersAndPrintsTheSecretOnce) {
  ::unsetenv("RING_MASTER");
  FakeHttpServer server([](const FakeRequest&) {
    return FakeResponse{201, R"({"id":3,"name":"ci","url":"https://h/x","type":"SLACK","created_by":"admin",
      "created_at":"2026-01-01T00:00:00Z","secret":"abc123",
      "triggers":[{"trigger_type":"EXPERIMENT_STATE_CHANGE","condition":{"state":"COMPLETED"}},
                  {"trigger_type":"TASK_LOG","condition":{"regex":"a|b"}}]})"};
  });
  auto r = RunRing({"-m", server.url(), "webhook", "create", "ci", "https://h/x", "--type", "slack",
                    "--trigger", "state=completed", "--trigger", "log=a|b"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 1u);
  const auto& req = requests[0];
  EXPECT_EQ(req.method, "POST");
  EXPECT_EQ(req.target, "/api/v1/webhooks");
  auto body = nlohmann::json::parse(req.body);
  EXPECT_EQ(body["name"], "ci");
  EXPECT_EQ(body["type"], "SLACK");
  ASSERT_EQ(body["triggers"].size(), 2u);
  EXPECT_EQ(body["triggers"][0]["trigger_type"], "EXPERIMENT_STATE_CHANGE");
  EXPECT_EQ(body["triggers"][0]["condition"]["state"], "COMPLETED");
  EXPECT_EQ(body["triggers"][1]["trigger_type"], "TASK_LOG");
  EXPECT_EQ(body["triggers"][1]["condition"]["regex"], "a|b");
  EXPECT_NE(r.out.find("abc123"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("state=COMPLETED, log=a|b"), std::string::npos) << r.out;
}

TEST(CliWebhook, BadTriggersAreRefusedBeforeAnythingIsSent) {
  FakeHttpServer server([](const FakeRequest&) { return FakeResponse{500, "{}"}; });
  for (const char* bad : {"state", "state=", "log=", "color=red"}) {
    auto r = RunRing({"-m", server.url(), "webhook", "create", "ci", "https://h/x", "--trigger", bad});
    EXPECT_NE(r.code, 0) << bad;
    EXPECT_NE(r.err.find("--trigger must be state=STATE"), std::string::npos) << r.err;
  }
  EXPECT_TRUE(server.requests().empty());
  EXPECT_FALSE(ParseTriggerFlag("log=").ok());
  EXPECT_TRUE(ParseTriggerFlag("log=x=y").ok()) << "only the first = splits";
}

TEST(CliWebhook, ATestThatWasNotDeliveredFails) {
  FakeHttpServer server([](const FakeRequest&) {
    return FakeResponse{200, R"({"id":9,"webhook_id":3,"event_type":"TEST","state":"FAILED","attempts":1,
      "last_status":502,"last_error":"HTTP 502","created_at":"x","delivered_at":null,"event":{}})"};
  });
  auto r = RunRing({"-m", server.url(), "webhook", "test", "3"});
  EXPECT_NE(r.code, 0);
  EXPECT_EQ(server.requests().at(0).target, "/api/v1/webhooks/3/test");
  EXPECT_NE(r.out.find("FAILED after 1 attempt(s), last status 502 (HTTP 502)"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace ring::cli
