// The sender against a real HTTP receiver on 127.0.0.1, with the host
// names resolved by a fake (what DNS says at delivery time): a delivery goes
// to the checked address with the URL's host in Host and a valid signature;
// a name rebound to an address the allow list does not name fails at once
// without a request; answers other than 2xx are retried, then FAILED.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "master/notifications/webhook_sender.h"
#include "master/notifications/webhook_signature.h"
#include "master/store/memory_store.h"
#include "tests/support/fake_http_server.h"

namespace ring {
namespace {

using ring::testing::FakeHttpServer;
using ring::testing::FakeRequest;
using ring::testing::FakeResponse;

HostResolver ResolvesTo(std::string address) {
  return [address](const std::string&, const std::string&) -> Result<std::vector<std::string>> {
    return std::vector<std::string>{address};
  };
}

class WebhookSenderTest : public ::testing::Test {
 protected:
  int64_t Delivery(const std::string& url) {
    WebhookRecord w;
    w.name = "hook-" + std::to_string(++hooks_);
    w.url = url;
    w.triggers = {{WebhookTriggerType::kExperimentStateChange, RunState::kCompleted, ""}};
    w.secret = "s3cret";
    w.created_by = "admin";
    auto id = store_.CreateWebhook(w);
    EXPECT_TRUE(id.ok());
    WebhookDelivery d;
    d.webhook_id = *id;
    d.event_type = WebhookEventType::kTest;
    d.event = R"({"event_type":"TEST"})";
    auto delivery = store_.AddWebhookDelivery(d);
    EXPECT_TRUE(delivery.ok());
    return *delivery;
  }
  WebhookDelivery Get(int64_t id) { return *store_.GetWebhookDelivery(id); }
  static WebhookSettings Fast(int64_t retries) {
    WebhookSettings s;
    s.retries = retries;
    s.retry_delay = std::chrono::milliseconds(10);
    s.timeout = std::chrono::seconds(5);
    return s;
  }
  static UrlAllowList Allow(const std::vector<std::string>& entries) { return *UrlAllowList::Make(entries); }
  MemoryStore store_;
  int hooks_ = 0;
};

TEST_F(WebhookSenderTest, SendsToTheCheckedAddressSigned) {
  FakeHttpServer receiver([](const FakeRequest&) { return FakeResponse{204, ""}; });
  const std::string port = std::to_string(receiver.port());
  WebhookSender sender(store_, Fast(0), Allow({"hooks.test", "127.0.0.1/32"}), ResolvesTo("127.0.0.1"));
  auto sent = sender.SendNow(Delivery("http://hooks.test:" + port + "/in?x=1"));
  ASSERT_TRUE(sent.ok());
  EXPECT_EQ(sent->state, DeliveryState::kDelivered) << sent->last_error;
  EXPECT_EQ(sent->last_status, 204);
  EXPECT_FALSE(sent->delivered_at.empty());
  const auto requests = receiver.requests();
  ASSERT_EQ(requests.size(), 1u);
  const auto& r = requests[0];
  EXPECT_EQ(r.target, "/in?x=1");
  EXPECT_EQ(r.headers.at("host"), "hooks.test:" + port);
  EXPECT_EQ(r.headers.at("x-ring-signature"),
            WebhookSignature("s3cret", std::stoll(r.headers.at("x-ring-timestamp")), r.body));
  EXPECT_EQ(r.body, R"({"event_type":"TEST"})");
}

TEST_F(WebhookSenderTest, ANameReboundToALoopbackAddressFailsWithoutARequest) {
  FakeHttpServer receiver([](const FakeRequest&) { return FakeResponse{200, "{}"}; });
  WebhookSender sender(store_, Fast(3), Allow({"hooks.test"}), ResolvesTo("127.0.0.1"));
  ASSERT_TRUE(sender.Start().ok());
  const int64_t id = Delivery("http://hooks.test:" + std::to_string(receiver.port()) + "/");
  sender.Enqueue(id);
  for (int i = 0; i < 500 && Get(id).state == DeliveryState::kPending; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(Get(id).state, DeliveryState::kFailed);
  EXPECT_EQ(Get(id).attempts, 1) << "a refusal is not retried";
  EXPECT_NE(Get(id).last_error.find("loopback"), std::string::npos) << Get(id).last_error;
  EXPECT_TRUE(receiver.requests().empty());
}

TEST_F(WebhookSenderTest, ErrorsAreRetriedThenFailed) {
  std::atomic<int> calls{0};
  FakeHttpServer receiver([&](const FakeRequest&) {
    ++calls;
    return FakeResponse{500, R"({"error":"down"})"};
  });
  WebhookSender sender(store_, Fast(2), Allow({receiver.url() + "/"}), ResolveHost);
  ASSERT_TRUE(sender.Start().ok());
  const int64_t id = Delivery(receiver.url() + "/x");
  sender.Enqueue(id);
  for (int i = 0; i < 500 && Get(id).state == DeliveryState::kPending; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(Get(id).state, DeliveryState::kFailed);
  EXPECT_EQ(Get(id).attempts, 3) << "the first and two retries";
  EXPECT_EQ(Get(id).last_status, 500);
  EXPECT_NE(Get(id).last_error.find("HTTP 500"), std::string::npos);
  EXPECT_EQ(calls, 3);
}

TEST_F(WebhookSenderTest, StartResumesPendingDeliveries) {
  FakeHttpServer receiver([](const FakeRequest&) { return FakeResponse{200, "{}"}; });
  const int64_t id = Delivery(receiver.url() + "/x");
  WebhookSender sender(store_, Fast(0), Allow({receiver.url() + "/"}), ResolveHost);
  ASSERT_TRUE(sender.Start().ok());
  for (int i = 0; i < 500 && Get(id).state == DeliveryState::kPending; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(Get(id).state, DeliveryState::kDelivered) << Get(id).last_error;
}

}  // namespace
}  // namespace ring
