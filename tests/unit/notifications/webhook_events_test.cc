// The bodies webhooks get: Determined's event shape for DEFAULT, Slack's
// {"text"} for SLACK, with user-written text escaped for Slack.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "master/notifications/webhook_events.h"

namespace ring {
namespace {

ExperimentEventFacts Facts() {
  ExperimentEventFacts f;
  f.id = 4;
  f.name = "mnist <@here>";
  f.owner = "ada";
  f.state = "COMPLETED";
  f.previous = "ACTIVE";
  f.resource_pool = "default";
  f.slots_per_trial = 2;
  f.duration_s = 75;
  return f;
}

TEST(WebhookEvents, DefaultExperimentEventHasDeterminedsShape) {
  auto j = nlohmann::json::parse(ExperimentStateEvent(WebhookType::kDefault, "id-1", 1700000000, Facts()));
  EXPECT_EQ(j["event_id"], "id-1");
  EXPECT_EQ(j["event_type"], "EXPERIMENT_STATE_CHANGE");
  EXPECT_EQ(j["timestamp"], 1700000000);
  EXPECT_EQ(j["condition"]["state"], "COMPLETED");
  const auto& e = j["event_data"]["experiment"];
  EXPECT_EQ(e["id"], 4);
  EXPECT_EQ(e["name"], "mnist <@here>");
  EXPECT_EQ(e["state"], "COMPLETED");
  EXPECT_EQ(e["previous_state"], "ACTIVE");
  EXPECT_EQ(e["duration"], 75);
  EXPECT_EQ(e["slots"], 2);
}

TEST(WebhookEvents, SlackGetsEscapedText) {
  auto j = nlohmann::json::parse(ExperimentStateEvent(WebhookType::kSlack, "id-1", 1700000000, Facts()));
  ASSERT_TRUE(j.contains("text")) << j.dump();
  const std::string text = j["text"];
  EXPECT_NE(text.find("Experiment 4"), std::string::npos) << text;
  EXPECT_NE(text.find("COMPLETED"), std::string::npos) << text;
  EXPECT_EQ(text.find("<@here>"), std::string::npos) << "a name cannot mention people: " << text;
  EXPECT_NE(text.find("&lt;@here&gt;"), std::string::npos) << text;
}

TEST(WebhookEvents, TaskLogEventCarriesTheLineCutTo1KiB) {
  LogEventFacts f{3, 9, "agent-1", 1, std::string(3000, 'x'), "x+"};
  auto j = nlohmann::json::parse(TaskLogEvent(WebhookType::kDefault, "id-2", 1, f));
  EXPECT_EQ(j["event_type"], "TASK_LOG");
  EXPECT_EQ(j["condition"]["regex"], "x+");
  EXPECT_EQ(j["event_data"]["task_log"]["trial_id"], 9);
  EXPECT_EQ(j["event_data"]["task_log"]["node"], "agent-1");
  EXPECT_EQ(j["event_data"]["task_log"]["log"].get<std::string>().size(), 1024u);
  auto slack = nlohmann::json::parse(TaskLogEvent(WebhookType::kSlack, "id-2", 1, f));
  EXPECT_NE(slack["text"].get<std::string>().find("trial 9"), std::string::npos);
}

TEST(WebhookEvents, TestEvent) {
  auto j = nlohmann::json::parse(TestEvent(WebhookType::kDefault, "id-3", 5, "ci"));
  EXPECT_EQ(j["event_type"], "TEST");
  EXPECT_TRUE(j["condition"].is_object());
  EXPECT_NE(j["event_data"]["data"].get<std::string>().find("ci"), std::string::npos);
}

}  // namespace
}  // namespace ring
