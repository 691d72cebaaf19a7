#pragma once
// The bodies the master posts (docs/rest.md "Webhooks"), pure: a DEFAULT
// webhook gets Determined's event shape {event_id, event_type, timestamp,
// condition, event_data}; a SLACK webhook gets a Slack message {"text"},
// its user-written parts escaped so a name or log line cannot mention
// @channel or hide a link.
#include <cstdint>
#include <string>

#include "master/store/webhook_records.h"

namespace ring {

struct ExperimentEventFacts {
  int64_t id = 0;
  std::string name;
  std::string owner;
  std::string state;     // the state reached
  std::string previous;  // the state before
  std::string resource_pool;
  int64_t slots_per_trial = 0;
  int64_t duration_s = 0;  // from creation to now
};

struct LogEventFacts {
  int64_t experiment_id = 0;
  int64_t trial_id = 0;
  std::string node;  // the agent that printed it
  int rank = 0;
  std::string line;   // at most 1 KiB is sent
  std::string regex;  // the trigger's pattern
};

// Each returns the JSON text to send. `event_id` names the event (a UUID),
// `now_s` is the Unix time it happened.
std::string ExperimentStateEvent(WebhookType type, const std::string& event_id, int64_t now_s,
                                 const ExperimentEventFacts& facts);
std::string TaskLogEvent(WebhookType type, const std::string& event_id, int64_t now_s,
                         const LogEventFacts& facts);
std::string TestEvent(WebhookType type, const std::string& event_id, int64_t now_s,
                      const std::string& webhook);

// Slack's mrkdwn escapes (&, <, >) of text a user wrote.
std::string SlackEscape(const std::string& text);

}  // namespace ring
