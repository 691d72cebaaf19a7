#include "master/store/webhook_records.h"

#include <array>
#include <utility>

namespace ring {
namespace {

template <typename E, size_t N>
std::optional<E> Find(const std::array<std::pair<E, std::string_view>, N>& names, std::string_view text) {
  for (const auto& [value, name] : names)
    if (name == text) return value;
  return std::nullopt;
}

template <typename E, size_t N>
std::string_view Name(const std::array<std::pair<E, std::string_view>, N>& names, E value) {
  for (const auto& [v, name] : names)
    if (v == value) return name;
  return "";
}

constexpr std::array<std::pair<WebhookType, std::string_view>, 2> kTypes{{
    {WebhookType::kDefault, "DEFAULT"},
    {WebhookType::kSlack, "SLACK"},
}};
constexpr std::array<std::pair<WebhookTriggerType, std::string_view>, 2> kTriggerTypes{{
    {WebhookTriggerType::kExperimentStateChange, "EXPERIMENT_STATE_CHANGE"},
    {WebhookTriggerType::kTaskLog, "TASK_LOG"},
}};
constexpr std::array<std::pair<WebhookEventType, std::string_view>, 3> kEventTypes{{
    {WebhookEventType::kExperimentStateChange, "EXPERIMENT_STATE_CHANGE"},
    {WebhookEventType::kTaskLog, "TASK_LOG"},
    {WebhookEventType::kTest, "TEST"},
}};
constexpr std::array<std::pair<DeliveryState, std::string_view>, 3> kDeliveryStates{{
    {DeliveryState::kPending, "PENDING"},
    {DeliveryState::kDelivered, "DELIVERED"},
    {DeliveryState::kFailed, "FAILED"},
}};

}  // namespace

std::string_view ToString(WebhookType t) {
  return Name(kTypes, t);
}
std::optional<WebhookType> ParseWebhookType(std::string_view text) {
  return Find(kTypes, text);
}
std::string_view ToString(WebhookTriggerType t) {
  return Name(kTriggerTypes, t);
}
std::optional<WebhookTriggerType> ParseWebhookTriggerType(std::string_view text) {
  return Find(kTriggerTypes, text);
}
std::string_view ToString(WebhookEventType t) {
  return Name(kEventTypes, t);
}
std::optional<WebhookEventType> ParseWebhookEventType(std::string_view text) {
  return Find(kEventTypes, text);
}
std::string_view ToString(DeliveryState s) {
  return Name(kDeliveryStates, s);
}
std::optional<DeliveryState> ParseDeliveryState(std::string_view text) {
  return Find(kDeliveryStates, text);
}

}  // namespace ring
