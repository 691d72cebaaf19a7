// Webhooks on a real master, agent and trials, posting to a real HTTP
// receiver the test starts on 127.0.0.1 (listed in the master's
// webhooks.allowed_urls): an experiment reaching COMPLETED and another
// reaching ERROR post signed JSON events (the HMAC checked here with
// OpenSSL), a trial's line matching a log trigger posts one event however
// often it is printed, a Slack webhook gets {"text"}, a receiver answering
// 500 twice is retried until DELIVERED with 3 attempts, a test event is
// sent on request; URLs off the allow list, loopback and private
// addresses are refused at creation naming `url`, and only admins create
// cluster-wide webhooks; a workspace's admins create webhooks of their
// workspace, which fire only for its experiments and go with it.
#include <gtest/gtest.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <atomic>
#include <map>

#include "tests/support/fake_http_server.h"
#include "tests/support/test_cluster.h"

namespace ring::testing::webhooks_e2e {
namespace {

using std::chrono::seconds;

std::string Hmac(const std::string& key, const std::string& message) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac, &len);
  std::string hex;
  char byte[3];
  for (unsigned i = 0; i < len; ++i) {
    std::snprintf(byte, sizeof byte, "%02x", mac[i]);
    hex += byte;
  }
  return hex;
}

// The requests the receiver got at `target`.
std::vector<FakeRequest> At(const FakeHttpServer& receiver, const std::string& target) {
  std::vector<FakeRequest> out;
  for (const auto& r : receiver.requests())
    if (r.target == target) out.push_back(r);
  return out;
}

// The request at `target` whose JSON body satisfies `match`, once one came.
std::optional<FakeRequest> WaitForBody(const FakeHttpServer& receiver, const std::string& target,
                                       const std::function<bool(const nlohmann::json&)>& match) {
  std::optional<FakeRequest> found;
  TestCluster::WaitFor(
      [&] {
        for (const auto& r : At(receiver, target)) {
          auto j = nlohmann::json::parse(r.body, nullptr, false);
          if (!j.is_discarded() && match(j)) {
            found = r;
            return true;
          }
        }
        return false;
      },
      seconds(60));
  return found;
}

void ExpectSigned(const FakeRequest& r, const std::string& secret) {
  ASSERT_TRUE(r.headers.contains("x-ring-signature")) << r.body;
  ASSERT_TRUE(r.headers.contains("x-ring-timestamp")) << r.body;
  const std::string ts = r.headers.at("x-ring-timestamp");
  const int64_t now =
      std::chrono::duration_cast<seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  EXPECT_LT(std::llabs(now - std::stoll(ts)), 300) << ts;
  EXPECT_EQ(r.headers.at("x-ring-signature"), Hmac(secret, ts + "." + r.body));
  EXPECT_NE(r.headers.at("x-ring-signature"), Hmac(secret + "x", ts + "." + r.body));
  EXPECT_EQ(r.headers.at("content-type"), "application/json");
}

std::string Config(const std::string& name, int max_restarts) {
  return "name: " + name +
         "\nentrypoint: ./train.sh\n"
         "searcher:\n  name: single\n  metric: validation_loss\n"
         "max_restarts: " +
         std::to_string(max_restarts) + "\n";
}

TEST(WebhooksE2E, StateAndLogEventsAreSignedRetriedAndRecorded) {
  std::atomic<int> flaky_calls{0};
  FakeHttpServer receiver([&](const FakeRequest& r) {
    if (r.target == "/flaky" && ++flaky_calls <= 2) return FakeResponse{500, R"({"error":"not yet"})"};
    return FakeResponse{200, "{}"};
  });
  TestCluster cluster;
  const std::string yaml = cluster.WriteFile(
      "master.yaml", "webhooks:\n  allowed_urls:\n    - " + receiver.url() +
                         "/\n    - localhost\n  retries: 3\n  retry_delay: 200ms\n  timeout: 5s\n");
  cluster.StartMaster({.extra_args = {"--config", yaml}});
  cluster.StartAgent("a1", 1);

  // Only admins create webhooks.
  const std::string bob = cluster.CreateUser("bob", "bob-password");
  auto as_bob = cluster.RingAs(
      "bob", bob, {"webhook", "create", "mine", receiver.url() + "/default", "--trigger", "state=COMPLETED"});
  EXPECT_NE(as_bob.exit_code, 0);
  EXPECT_NE(as_bob.err.find("only admins"), std::string::npos) << as_bob.err;
  int status = 0;
  cluster.PostJson(
      "/api/v1/webhooks",
      {{"name", "mine"},
       {"url", receiver.url() + "/default"},
       {"triggers", {{{"trigger_type", "EXPERIMENT_STATE_CHANGE"}, {"condition", {{"state", "ERROR"}}}}}}},
      &status);
  EXPECT_EQ(status, 201) << "the admin may";
  auto bob_client = cluster.NewClient();
  bob_client->SetBearerToken(bob);
  auto forbidden = bob_client->Request("POST", "/api/v1/webhooks", R"({"name":"b","url":"x","triggers":[]})");
  ASSERT_TRUE(forbidden.ok());
  EXPECT_EQ(forbidden->status, 403) << forbidden->body;
  ASSERT_EQ(cluster.Ring({"webhook", "delete", "1"}).exit_code, 0);

  // URLs the allow list does not cover, and loopback behind a listed name.
  for (const std::string& url : {std::string("https://hooks.example.com/x"),
                                 "http://127.0.0.1:" + std::to_string(receiver.port() + 1) + "/",
                                 "http://localhost:" + std::to_string(receiver.port()) + "/default",
                                 std::string("http://10.1.2.3/hook")}) {
    auto res = cluster.client().Request(
        "POST", "/api/v1/webhooks",
        nlohmann::json{{"name", "refused"},
                       {"url", url},
                       {"triggers", {{{"trigger_type", "TASK_LOG"}, {"condition", {{"regex", "x"}}}}}}}
            .dump());
    ASSERT_TRUE(res.ok());
    EXPECT_EQ(res->status, 400) << url << ": " << res->body;
    EXPECT_NE(res->body.find("url"), std::string::npos) << res->body;
  }

  auto made =
      cluster.Ring({"--json", "webhook", "create", "json", receiver.url() + "/default", "--trigger",
                    "state=COMPLETED", "--trigger", "state=error", "--trigger", "log=disk (full|quota)"});
  ASSERT_EQ(made.exit_code, 0) << made.out << made.err;
  const auto hook = nlohmann::json::parse(made.out);
  const std::string secret = hook["secret"];
  ASSERT_EQ(secret.size(), 64u);
  auto slack = cluster.Ring({"webhook", "create", "chat", receiver.url() + "/slack", "--type", "slack",
                             "--trigger", "state=COMPLETED"});
  ASSERT_EQ(slack.exit_code, 0) << slack.out << slack.err;
  EXPECT_NE(slack.out.find("Signing secret"), std::string::npos) << slack.out;
  ASSERT_EQ(
      cluster.Ring({"webhook", "create", "flaky", receiver.url() + "/flaky", "--trigger", "state=COMPLETED"})
          .exit_code,
      0);
  auto listed = cluster.Ring({"webhook", "list"});
  EXPECT_NE(listed.out.find("chat"), std::string::npos) << listed.out;
  EXPECT_EQ(listed.out.find(secret), std::string::npos) << "no secret in the list";
  for (const auto& w : cluster.GetJson("/api/v1/webhooks")["webhooks"]) EXPECT_FALSE(w.contains("secret"));

  // Experiment 1 prints the pattern three times and completes; 2 fails.
  auto model =
      cluster.MakeModelDir("model", {{"train.sh",
                                      "#!/bin/sh\n"
                                      "if [ \"$FAIL\" = 1 ]; then echo failing; exit 1; fi\n"
                                      "for i in 1 2 3; do echo \"step $i: disk full on /scratch\"; done\n"
                                      "sleep 1\n"}});
  auto first = cluster.Ring({"experiment", "create", cluster.WriteFile("ok.yaml", Config("ok", 0)), model});
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  EXPECT_EQ(cluster.Ring({"experiment", "wait", "1"}).exit_code, 0);
  auto second = cluster.Ring(
      {"experiment", "create",
       cluster.WriteFile("bad.yaml", Config("bad", 0) + "environment:\n  variables:\n    FAIL: \"1\"\n"),
       model});
  ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
  EXPECT_NE(cluster.Ring({"experiment", "wait", "2"}).exit_code, 0);

  auto completed = WaitForBody(receiver, "/default", [](const nlohmann::json& j) {
    return j.value("event_type", "") == "EXPERIMENT_STATE_CHANGE" && j["condition"]["state"] == "COMPLETED";
  });
  ASSERT_TRUE(completed) << "no COMPLETED event";
  ExpectSigned(*completed, secret);
  auto event = nlohmann::json::parse(completed->body);
  EXPECT_EQ(event["event_data"]["experiment"]["id"], 1);
  EXPECT_EQ(event["event_data"]["experiment"]["name"], "ok");
  EXPECT_EQ(event["event_data"]["experiment"]["owner"], "admin");

  auto errored = WaitForBody(receiver, "/default", [](const nlohmann::json& j) {
    return j.value("event_type", "") == "EXPERIMENT_STATE_CHANGE" && j["condition"]["state"] == "ERROR";
  });
  ASSERT_TRUE(errored) << "no ERROR event";
  ExpectSigned(*errored, secret);
  EXPECT_EQ(nlohmann::json::parse(errored->body)["event_data"]["experiment"]["id"], 2);

  auto logged = WaitForBody(receiver, "/default",
                            [](const nlohmann::json& j) { return j.value("event_type", "") == "TASK_LOG"; });
  ASSERT_TRUE(logged) << "no TASK_LOG event";
  ExpectSigned(*logged, secret);
  auto log = nlohmann::json::parse(logged->body);
  EXPECT_EQ(log["condition"]["regex"], "disk (full|quota)");
  EXPECT_EQ(log["event_data"]["task_log"]["experiment_id"], 1);
  EXPECT_EQ(log["event_data"]["task_log"]["node"], "a1");
  EXPECT_EQ(log["event_data"]["task_log"]["log"], "step 1: disk full on /scratch");
  int log_events = 0;
  for (const auto& r : At(receiver, "/default"))
    if (r.body.find("\"TASK_LOG\"") != std::string::npos) ++log_events;
  EXPECT_EQ(log_events, 1) << "three matching lines, one event a minute";

  auto chat = WaitForBody(receiver, "/slack", [](const nlohmann::json& j) { return j.contains("text"); });
  ASSERT_TRUE(chat) << "no Slack message";
  auto text = nlohmann::json::parse(chat->body);
  EXPECT_EQ(text.size(), 1u) << "Slack's shape: " << chat->body;
  EXPECT_NE(text["text"].get<std::string>().find("Experiment 1"), std::string::npos) << chat->body;
  EXPECT_NE(text["text"].get<std::string>().find("COMPLETED"), std::string::npos) << chat->body;

  // The flaky receiver: 500, 500, then 200.
  const int64_t flaky_id = 4;
  nlohmann::json delivery;
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        auto list =
            cluster.GetJson("/api/v1/webhooks/" + std::to_string(flaky_id) + "/deliveries")["deliveries"];
        if (list.empty() || list[0]["state"] == "PENDING") return false;
        delivery = list[0];
        return true;
      },
      seconds(60)));
  EXPECT_EQ(delivery["state"], "DELIVERED") << delivery.dump();
  EXPECT_EQ(delivery["attempts"], 3) << delivery.dump();
  EXPECT_EQ(delivery["last_status"], 200) << delivery.dump();
  EXPECT_EQ(delivery["event_type"], "EXPERIMENT_STATE_CHANGE");
  EXPECT_EQ(At(receiver, "/flaky").size(), 3u);
  auto shown = cluster.Ring({"webhook", "deliveries", std::to_string(flaky_id)});
  EXPECT_NE(shown.out.find("DELIVERED"), std::string::npos) << shown.out;

  // A test event now, with its outcome.
  const std::string json_id = std::to_string(hook["id"].get<int64_t>());
  auto tested = cluster.Ring({"webhook", "test", json_id});
  EXPECT_EQ(tested.exit_code, 0) << tested.out << tested.err;
  EXPECT_NE(tested.out.find("DELIVERED"), std::string::npos) << tested.out;
  auto test_event = WaitForBody(receiver, "/default",
                                [](const nlohmann::json& j) { return j.value("event_type", "") == "TEST"; });
  ASSERT_TRUE(test_event);
  ExpectSigned(*test_event, secret);

  ASSERT_EQ(cluster.Ring({"webhook", "delete", std::to_string(flaky_id)}).exit_code, 0);
  cluster.GetJson("/api/v1/webhooks/" + std::to_string(flaky_id) + "/deliveries", &status);
  EXPECT_EQ(status, 404);
  EXPECT_EQ(cluster.GetJson("/api/v1/webhooks")["total"], 2);
  if (HasFailure()) cluster.DumpLogs();
}

// With "*" on the allow list any public host may be named, but loopback and
// private addresses still need the list to name them.
TEST(WebhooksE2E, AWildcardAllowListStillRefusesLoopbackAndPrivateAddresses) {
  TestCluster cluster;
  const std::string yaml = cluster.WriteFile("master.yaml", "webhooks:\n  allowed_urls: [\"*\"]\n");
  cluster.StartMaster({.extra_args = {"--config", yaml}});
  for (const std::string url : {"http://10.1.2.3/hook", "http://127.0.0.1:9/", "http://[::1]:9/",
                                "http://169.254.169.254/latest/meta-data/"}) {
    auto res = cluster.client().Request(
        "POST", "/api/v1/webhooks",
        nlohmann::json{{"name", "probe"},
                       {"url", url},
                       {"triggers",
                        {{{"trigger_type", "EXPERIMENT_STATE_CHANGE"}, {"condition", {{"state", "ERROR"}}}}}}}
            .dump());
    ASSERT_TRUE(res.ok());
    EXPECT_EQ(res->status, 400) << url << ": " << res->body;
    EXPECT_NE(res->body.find("url: "), std::string::npos) << res->body;
  }
  EXPECT_EQ(cluster.GetJson("/api/v1/webhooks")["total"], 0);
}

// A workspace's ADMIN creates a webhook of that workspace; its members see
// it, others do not; it fires for the workspace's experiments only (a
// cluster-wide webhook for every one); it goes with its workspace.
TEST(WebhooksE2E, AWorkspaceWebhookWatchesOnlyItsWorkspace) {
  FakeHttpServer receiver([](const FakeRequest&) { return FakeResponse{200, "{}"}; });
  TestCluster cluster;
  const std::string yaml = cluster.WriteFile(
      "master.yaml", "webhooks:\n  allowed_urls: [\"" + receiver.url() + "/\"]\n  retry_delay: 200ms\n");
  cluster.StartMaster({.extra_args = {"--config", yaml}});
  cluster.StartAgent("a1", 1);
  std::map<std::string, std::string> token;
  for (const char* user : {"ada", "bob", "carol"})
    token[user] = cluster.CreateUser(user, std::string(user) + "-password");
  auto as = [&](const std::string& user, std::vector<std::string> args) {
    return cluster.RingAs(user, token.at(user), std::move(args));
  };
  auto status_of = [&](const std::string& user, const std::string& method, const std::string& target,
                       const std::string& body, nlohmann::json* out = nullptr) {
    auto http = cluster.NewClient();
    http->SetBearerToken(token.at(user));
    auto res = http->Request(method, target, body);
    if (!res.ok()) return -1;
    if (out) *out = nlohmann::json::parse(res->body, nullptr, false);
    return res->status;
  };
  ASSERT_EQ(cluster.Ring({"workspace", "create", "nlp"}).exit_code, 0);
  ASSERT_EQ(cluster.Ring({"workspace", "member", "add", "nlp", "ada", "--role", "ADMIN"}).exit_code, 0);
  ASSERT_EQ(as("ada", {"workspace", "member", "add", "nlp", "bob"}).exit_code, 0);
  ASSERT_EQ(as("ada", {"project", "create", "nlp", "text"}).exit_code, 0);

  // Who may create what.
  const std::string hook_url = receiver.url() + "/nlp";
  auto by_bob =
      as("bob", {"webhook", "create", "b", hook_url, "--workspace", "nlp", "--trigger", "state=ERROR"});
  EXPECT_NE(by_bob.exit_code, 0);
  EXPECT_NE(by_bob.err.find("only an admin of workspace \"nlp\""), std::string::npos) << by_bob.err;
  auto cluster_wide = as("ada", {"webhook", "create", "c", hook_url, "--trigger", "state=ERROR"});
  EXPECT_NE(cluster_wide.exit_code, 0);
  EXPECT_NE(cluster_wide.err.find("only admins may create cluster-wide webhooks"), std::string::npos)
      << cluster_wide.err;
  const std::string triggers =
      R"("triggers":[{"trigger_type":"EXPERIMENT_STATE_CHANGE","condition":{"state":"ERROR"}}])";
  nlohmann::json refused;
  EXPECT_EQ(
      status_of("carol", "POST", "/api/v1/webhooks",
                R"({"name":"x","url":")" + hook_url + R"(","workspace_id":2,)" + triggers + "}", &refused),
      400)
      << "carol is no member of nlp";
  EXPECT_NE(refused.dump().find("workspace_id"), std::string::npos) << refused.dump();
  auto made = as("ada", {"--json", "webhook", "create", "nlp-done", hook_url, "--workspace", "nlp",
                         "--trigger", "state=COMPLETED", "--trigger", "log=disk full"});
  ASSERT_EQ(made.exit_code, 0) << made.out << made.err;
  const auto hook = nlohmann::json::parse(made.out);
  EXPECT_EQ(hook["workspace_id"], 2);
  EXPECT_EQ(hook["workspace"], "nlp");
  const std::string hook_id = std::to_string(hook["id"].get<int64_t>());
  ASSERT_EQ(
      cluster.Ring({"webhook", "create", "all-done", receiver.url() + "/all", "--trigger", "state=COMPLETED"})
          .exit_code,
      0);

  // Who sees and manages it.
  nlohmann::json listed;
  ASSERT_EQ(status_of("bob", "GET", "/api/v1/webhooks", "", &listed), 200);
  EXPECT_EQ(listed["total"], 2) << listed.dump();
  ASSERT_EQ(status_of("carol", "GET", "/api/v1/webhooks", "", &listed), 200);
  ASSERT_EQ(listed["total"], 1) << listed.dump();
  EXPECT_EQ(listed["webhooks"][0]["name"], "all-done");
  EXPECT_TRUE(listed["webhooks"][0]["workspace_id"].is_null());
  EXPECT_EQ(status_of("carol", "GET", "/api/v1/webhooks/" + hook_id + "/deliveries", ""), 404);
  EXPECT_EQ(status_of("carol", "DELETE", "/api/v1/webhooks/" + hook_id, ""), 404);
  EXPECT_EQ(status_of("bob", "DELETE", "/api/v1/webhooks/" + hook_id, ""), 403);
  EXPECT_EQ(status_of("ada", "DELETE", "/api/v1/webhooks/2", ""), 403)
      << "the cluster-wide one is the admins'";
  auto tested = as("ada", {"webhook", "test", hook_id});
  EXPECT_EQ(tested.exit_code, 0) << tested.out << tested.err;
  auto shown = as("ada", {"webhook", "list", "--workspace", "nlp"});
  EXPECT_NE(shown.out.find("nlp-done"), std::string::npos) << shown.out;
  EXPECT_EQ(shown.out.find("all-done"), std::string::npos) << shown.out;

  // ada's experiment in nlp/text and carol's in the default project both
  // complete, printing the pattern: nlp's webhook hears of ada's only.
  auto model =
      cluster.MakeModelDir("model", {{"train.sh", "#!/bin/sh\necho 'disk full on /scratch'\nsleep 1\n"}});
  ASSERT_EQ(as("ada", {"experiment", "create", cluster.WriteFile("a.yaml", Config("in-nlp", 0)), model,
                       "--project", "nlp/text"})
                .exit_code,
            0);
  ASSERT_EQ(as("carol", {"experiment", "create", cluster.WriteFile("c.yaml", Config("elsewhere", 0)), model})
                .exit_code,
            0);
  EXPECT_EQ(cluster.Ring({"experiment", "wait", "1"}).exit_code, 0);
  EXPECT_EQ(cluster.Ring({"experiment", "wait", "2"}).exit_code, 0);
  ASSERT_TRUE(TestCluster::WaitFor([&] { return At(receiver, "/all").size() == 2; }, seconds(60)))
      << "the cluster-wide webhook hears of both";
  ASSERT_TRUE(WaitForBody(receiver, "/nlp", [](const nlohmann::json& j) {
    return j.value("event_type", "") == "TASK_LOG";
  })) << "no TASK_LOG event for nlp";
  ASSERT_TRUE(WaitForBody(receiver, "/nlp", [](const nlohmann::json& j) {
    return j.value("event_type", "") == "EXPERIMENT_STATE_CHANGE";
  })) << "no COMPLETED event for nlp";
  // Deliveries are recorded before they are sent: every one nlp's webhook
  // got is listed by now (the TEST aside).
  std::vector<int64_t> experiments;
  const auto deliveries = cluster.GetJson("/api/v1/webhooks/" + hook_id + "/deliveries");
  for (const auto& d : deliveries["deliveries"]) {
    const auto& data = d["event"]["event_data"];
    if (d["event_type"] == "EXPERIMENT_STATE_CHANGE")
      experiments.push_back(data["experiment"]["id"].get<int64_t>());
    else if (d["event_type"] == "TASK_LOG")
      experiments.push_back(data["task_log"]["experiment_id"].get<int64_t>());
  }
  EXPECT_EQ(experiments, (std::vector<int64_t>{1, 1}))
      << "nlp's webhook hears of experiment 1 only: " << deliveries.dump();

  // It goes with its workspace.
  ASSERT_EQ(as("ada", {"experiment", "delete", "1", "--yes"}).exit_code, 0);
  auto gone = cluster.Ring({"workspace", "delete", "nlp"});
  ASSERT_EQ(gone.exit_code, 0) << gone.out << gone.err;
  int status = 0;
  cluster.GetJson("/api/v1/webhooks/" + hook_id + "/deliveries", &status);
  EXPECT_EQ(status, 404);
  EXPECT_EQ(cluster.GetJson("/api/v1/webhooks")["total"], 1);
  if (HasFailure()) cluster.DumpLogs();
}

// Deliveries are written before they are sent: one still waiting for a
// retry when the master stops is sent when it starts again.
TEST(WebhooksE2E, APendingDeliveryIsSentAfterARestart) {
  std::atomic<bool> up{false};
  FakeHttpServer receiver([&](const FakeRequest&) { return FakeResponse{up ? 200 : 503, "{}"}; });
  TestCluster cluster;
  const std::string yaml =
      cluster.WriteFile("master.yaml", "webhooks:\n  allowed_urls: [\"" + receiver.url() +
                                           "/\"]\n  retries: 5\n  retry_delay: 10m\n");
  cluster.StartMaster({.extra_args = {"--config", yaml}});
  ASSERT_EQ(cluster.Ring({"webhook", "create", "paused", receiver.url() + "/p", "--trigger", "state=PAUSED"})
                .exit_code,
            0);
  auto model = cluster.MakeModelDir("model", {{"train.sh", "#!/bin/sh\nsleep 60\n"}});
  ASSERT_EQ(
      cluster.Ring({"experiment", "create", cluster.WriteFile("p.yaml", Config("p", 0)), model}).exit_code,
      0);
  ASSERT_EQ(cluster.Ring({"experiment", "pause", "1"}).exit_code, 0);
  auto latest = [&] {
    auto list = cluster.GetJson("/api/v1/webhooks/1/deliveries")["deliveries"];
    return list.empty() ? nlohmann::json() : list[0];
  };
  ASSERT_TRUE(TestCluster::WaitFor([&] { return latest().value("attempts", 0) == 1; }, seconds(30)));
  EXPECT_EQ(latest()["state"], "PENDING") << latest().dump();
  EXPECT_EQ(latest()["last_status"], 503);
  cluster.StopMaster();
  up = true;
  cluster.StartMaster({.extra_args = {"--config", yaml}});
  ASSERT_TRUE(TestCluster::WaitFor([&] { return latest().value("state", "") == "DELIVERED"; }, seconds(30)))
      << latest().dump();
  EXPECT_EQ(latest()["attempts"], 2);
  EXPECT_EQ(receiver.requests().size(), 2u);
  EXPECT_EQ(receiver.requests()[0].headers.at("x-ring-delivery"),
            receiver.requests()[1].headers.at("x-ring-delivery"))
      << "the same delivery, sent again";
}

}  // namespace
}  // namespace ring::testing::webhooks_e2e
