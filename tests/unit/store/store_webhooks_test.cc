// Webhooks and their deliveries behave the same in both Store
// implementations: names are unique, triggers round-trip, deliveries are
// listed newest first, PENDING ones are found for a restarted master, the
// history of ended ones is bounded, and deleting a webhook takes its
// deliveries with it; a workspace's webhooks go with the workspace.
#include <gtest/gtest.h>

#include "master/store/memory_store.h"
#include "master/store/sqlite_store.h"
#include "tests/unit/store/store_holders.h"

namespace ring {
namespace {

template <typename Holder>
class StoreWebhooksTest : public ::testing::Test {
 protected:
  Store& store() { return *holder_.store; }
  Holder holder_;
};

TYPED_TEST_SUITE(StoreWebhooksTest, testing::BothStores);

WebhookRecord Hook(const std::string& name) {
  WebhookRecord w;
  w.name = name;
  w.url = "https://hooks.example.com/" + name;
  w.type = WebhookType::kSlack;
  w.triggers = {{WebhookTriggerType::kExperimentStateChange, RunState::kError, ""},
                {WebhookTriggerType::kTaskLog, RunState::kCompleted, "disk (full|quota)"}};
  w.secret = std::string(64, 'a');
  w.created_by = "admin";
  return w;
}

TYPED_TEST(StoreWebhooksTest, CreateListGetAndDelete) {
  Store& s = this->store();
  auto id = s.CreateWebhook(Hook("ci"));
  ASSERT_TRUE(id.ok()) << id.status().message();
  EXPECT_EQ(s.CreateWebhook(Hook("ci")).status().code(), ErrorCode::kConflict);
  ASSERT_TRUE(s.CreateWebhook(Hook("chat")).ok());
  auto got = s.GetWebhook(*id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->name, "ci");
  EXPECT_EQ(got->type, WebhookType::kSlack);
  EXPECT_EQ(got->triggers, Hook("ci").triggers);
  EXPECT_EQ(got->secret, std::string(64, 'a'));
  EXPECT_TRUE(testing::LooksLikeRfc3339(got->created_at)) << got->created_at;
  auto list = s.ListWebhooks();
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].name, "ci");
  ASSERT_TRUE(s.DeleteWebhook(*id).ok());
  EXPECT_EQ(s.DeleteWebhook(*id).code(), ErrorCode::kNotFound);
  EXPECT_EQ(s.GetWebhook(*id).status().code(), ErrorCode::kNotFound);
}

TYPED_TEST(StoreWebhooksTest, AWorkspacesWebhooksGoWithIt) {
  Store& s = this->store();
  auto ws = s.CreateWorkspace({.name = "nlp", .created_by = "admin"});
  ASSERT_TRUE(ws.ok()) << ws.status().message();
  WebhookRecord scoped = Hook("nlp-done");
  scoped.workspace_id = ws->id;
  auto in_ws = s.CreateWebhook(scoped);
  auto everywhere = s.CreateWebhook(Hook("all-done"));
  ASSERT_TRUE(in_ws.ok() && everywhere.ok());
  EXPECT_EQ(s.GetWebhook(*in_ws)->workspace_id, ws->id);
  EXPECT_EQ(s.GetWebhook(*everywhere)->workspace_id, std::nullopt);
  WebhookDelivery d;
  d.webhook_id = *in_ws;
  d.event = "{}";
  auto delivery = s.AddWebhookDelivery(d);
  ASSERT_TRUE(delivery.ok());
  ASSERT_TRUE(s.DeleteWorkspace(ws->id).ok());
  EXPECT_EQ(s.GetWebhook(*in_ws).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(s.GetWebhookDelivery(*delivery).status().code(), ErrorCode::kNotFound);
  auto list = s.ListWebhooks();
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].name, "all-done");
}

TYPED_TEST(StoreWebhooksTest, DeliveriesRecordTheirOutcome) {
  Store& s = this->store();
  auto hook = s.CreateWebhook(Hook("ci"));
  ASSERT_TRUE(hook.ok());
  WebhookDelivery d;
  d.webhook_id = *hook;
  d.event_type = WebhookEventType::kExperimentStateChange;
  d.event = R"({"event_type":"EXPERIMENT_STATE_CHANGE"})";
  auto first = s.AddWebhookDelivery(d);
  auto second = s.AddWebhookDelivery(d);
  ASSERT_TRUE(first.ok() && second.ok());
  d.webhook_id = 999;
  EXPECT_EQ(s.AddWebhookDelivery(d).status().code(), ErrorCode::kNotFound);
  auto pending = s.ListPendingWebhookDeliveries();
  ASSERT_TRUE(pending.ok());
  ASSERT_EQ(pending->size(), 2u);
  EXPECT_EQ((*pending)[0].id, *first) << "oldest first";

  auto delivered = s.GetWebhookDelivery(*first);
  ASSERT_TRUE(delivered.ok());
  EXPECT_EQ(delivered->state, DeliveryState::kPending);
  EXPECT_EQ(delivered->last_status, std::nullopt);
  delivered->state = DeliveryState::kDelivered;
  delivered->attempts = 3;
  delivered->last_status = 200;
  delivered->last_error = "";
  delivered->delivered_at = NowRfc3339();
  ASSERT_TRUE(s.UpdateWebhookDelivery(*delivered).ok());
  auto list = s.ListWebhookDeliveries(*hook, 10);
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].id, *second) << "newest first";
  EXPECT_EQ((*list)[1].state, DeliveryState::kDelivered);
  EXPECT_EQ((*list)[1].attempts, 3);
  EXPECT_EQ((*list)[1].last_status, 200);
  EXPECT_EQ((*list)[1].event, R"({"event_type":"EXPERIMENT_STATE_CHANGE"})");
  EXPECT_EQ(s.ListPendingWebhookDeliveries()->size(), 1u);
  EXPECT_EQ(s.ListWebhookDeliveries(*hook, 1)->size(), 1u);

  ASSERT_TRUE(s.DeleteWebhook(*hook).ok());
  EXPECT_EQ(s.GetWebhookDelivery(*second).status().code(), ErrorCode::kNotFound);
  EXPECT_TRUE(s.ListPendingWebhookDeliveries()->empty());
}

TYPED_TEST(StoreWebhooksTest, EndedDeliveriesBeyondTheKeptNumberGo) {
  Store& s = this->store();
  auto hook = s.CreateWebhook(Hook("ci"));
  ASSERT_TRUE(hook.ok());
  WebhookDelivery d;
  d.webhook_id = *hook;
  d.state = DeliveryState::kPending;
  ASSERT_TRUE(s.AddWebhookDelivery(d).ok());  // stays, however old
  d.state = DeliveryState::kFailed;
  for (int64_t i = 0; i < Store::kKeptWebhookDeliveries + 20; ++i) ASSERT_TRUE(s.AddWebhookDelivery(d).ok());
  auto list = s.ListWebhookDeliveries(*hook, 10000);
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(static_cast<int64_t>(list->size()), Store::kKeptWebhookDeliveries + 1);
  EXPECT_EQ(list->back().state, DeliveryState::kPending);
}

}  // namespace
}  // namespace ring
