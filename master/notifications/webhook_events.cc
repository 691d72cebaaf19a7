#include "master/notifications/webhook_events.h"

#include <nlohmann/json.hpp>

namespace ring {
namespace {

constexpr size_t kMaxLine = 1024;

std::string Cut(const std::string& line) {
  if (line.size() <= kMaxLine) return line;
  size_t n = kMaxLine;
  while (n > 0 && (static_cast<unsigned char>(line[n]) & 0xc0) == 0x80) --n;  // whole UTF-8 characters
  return line.substr(0, n);
}

std::string Envelope(const std::string& event_id, WebhookEventType type, int64_t now_s,
                     nlohmann::json condition, nlohmann::json data) {
  return nlohmann::json{{"event_id", event_id},
                        {"event_type", ToString(type)},
                        {"timestamp", now_s},
                        {"condition", std::move(condition)},
                        {"event_data", std::move(data)}}
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string Slack(const std::string& text) {
  return nlohmann::json{{"text", text}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string Duration(int64_t s) {
  if (s < 60) return std::to_string(s) + "s";
  if (s < 3600) return std::to_string(s / 60) + "m " + std::to_string(s % 60) + "s";
  return std::to_string(s / 3600) + "h " + std::to_string(s % 3600 / 60) + "m";
}

}  // namespace

std::string SlackEscape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else
      out += c;
  }
  return out;
}

std::string ExperimentStateEvent(WebhookType type, const std::string& event_id, int64_t now_s,
                                 const ExperimentEventFacts& f) {
  if (type == WebhookType::kSlack) {
    const char* mark = f.state == "COMPLETED" ? ":white_check_mark: " : f.state == "ERROR" ? ":x: " : "";
    return Slack(std::string(mark) + "Experiment " + std::to_string(f.id) + " (" + SlackEscape(f.name) +
                 ", " + SlackEscape(f.owner) + ") is " + f.state + " after " + Duration(f.duration_s) +
                 " (was " + f.previous + "; pool " + SlackEscape(f.resource_pool) + ")");
  }
  nlohmann::json experiment{{"id", f.id},
                            {"name", f.name},
                            {"owner", f.owner},
                            {"state", f.state},
                            {"previous_state", f.previous},
                            {"duration", f.duration_s},
                            {"resource_pool", f.resource_pool},
                            {"slots", f.slots_per_trial}};
  return Envelope(event_id, WebhookEventType::kExperimentStateChange, now_s, {{"state", f.state}},
                  {{"experiment", std::move(experiment)}});
}

std::string TaskLogEvent(WebhookType type, const std::string& event_id, int64_t now_s,
                         const LogEventFacts& f) {
  const std::string line = Cut(f.line);
  if (type == WebhookType::kSlack)
    return Slack("Experiment " + std::to_string(f.experiment_id) + ", trial " + std::to_string(f.trial_id) +
                 ", rank " + std::to_string(f.rank) + " on " + SlackEscape(f.node) +
                 " printed a line matching `" + SlackEscape(f.regex) + "`:\n```" + SlackEscape(line) + "```");
  nlohmann::json log{{"experiment_id", f.experiment_id},
                     {"trial_id", f.trial_id},
                     {"node", f.node},
                     {"rank", f.rank},
                     {"log", line}};
  return Envelope(event_id, WebhookEventType::kTaskLog, now_s, {{"regex", f.regex}},
                  {{"task_log", std::move(log)}});
}

std::string TestEvent(WebhookType type, const std::string& event_id, int64_t now_s,
                      const std::string& webhook) {
  if (type == WebhookType::kSlack)
    return Slack("A test message from Ringmaster for the webhook " + SlackEscape(webhook));
  return Envelope(event_id, WebhookEventType::kTest, now_s, nlohmann::json::object(),
                  {{"data", "a test event for the webhook " + webhook}});
}

}  // namespace ring
