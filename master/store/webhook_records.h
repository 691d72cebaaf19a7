#pragma once
// Webhooks as the store keeps them (docs/rest.md "Webhooks"): where the
// master posts events, on which triggers, and each event's delivery. The
// notifications (master/notifications) match events, send and record them.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/states.h"

namespace ring {

// How the body of a request is shaped: our JSON event, or a Slack message.
enum class WebhookType { kDefault, kSlack };
std::string_view ToString(WebhookType t);  // "DEFAULT", "SLACK"
std::optional<WebhookType> ParseWebhookType(std::string_view text);

// Determined's trigger types: an experiment reached a state; a line of a
// trial's output matched a pattern (TASK_LOG).
enum class WebhookTriggerType { kExperimentStateChange, kTaskLog };
std::string_view ToString(WebhookTriggerType t);  // "EXPERIMENT_STATE_CHANGE", "TASK_LOG"
std::optional<WebhookTriggerType> ParseWebhookTriggerType(std::string_view text);

// What an event is about: a trigger's type, or a test sent on request.
enum class WebhookEventType { kExperimentStateChange, kTaskLog, kTest };
std::string_view ToString(WebhookEventType t);  // the trigger's name, or "TEST"
std::optional<WebhookEventType> ParseWebhookEventType(std::string_view text);

enum class DeliveryState { kPending, kDelivered, kFailed };
std::string_view ToString(DeliveryState s);  // "PENDING", "DELIVERED", "FAILED"
std::optional<DeliveryState> ParseDeliveryState(std::string_view text);

struct WebhookTrigger {
  WebhookTriggerType type = WebhookTriggerType::kExperimentStateChange;
  RunState state = RunState::kCompleted;  // kExperimentStateChange: the state reached
  std::string regex;                      // kTaskLog: the RE2 pattern (log_policies' matcher)
  bool operator==(const WebhookTrigger&) const = default;
};

struct WebhookRecord {
  int64_t id = 0;  // set by the store
  std::string name;
  std::string url;
  WebhookType type = WebhookType::kDefault;
  std::vector<WebhookTrigger> triggers;
  std::string secret;  // the key of each request's X-Ring-Signature
  // The workspace whose experiments it watches; none: every experiment
  // (cluster-wide, cluster admins only).
  std::optional<int64_t> workspace_id;
  std::string created_by;
  std::string created_at;  // set by the store
};

// One event for one webhook, written PENDING before it is sent.
struct WebhookDelivery {
  int64_t id = 0;  // set by the store
  int64_t webhook_id = 0;
  WebhookEventType event_type = WebhookEventType::kTest;
  std::string event;  // the JSON body as sent
  DeliveryState state = DeliveryState::kPending;
  int64_t attempts = 0;
  std::optional<int64_t> last_status;  // the HTTP status of the last answer, if one came
  std::string last_error;              // why the last attempt failed; empty when it did not
  std::string created_at;              // set by the store
  std::string delivered_at;            // set when DELIVERED
};

}  // namespace ring
