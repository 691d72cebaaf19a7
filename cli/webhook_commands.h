#pragma once
// `ring webhook create|list|delete|test|deliveries`: where the master posts
// events (docs/rest.md "Webhooks"). Creating, deleting and testing is for
// admins; the signing secret is printed once, at creation.
#include <cstdint>
#include <string>
#include <vector>

#include "cli/cli_env.h"

namespace ring::cli {

struct WebhookCreateOptions {
  std::string name;
  std::string url;
  std::string type = "default";       // default or slack
  std::vector<std::string> triggers;  // state=COMPLETED, log=REGEX
};

// The trigger of one --trigger: {trigger_type, condition}, or kInvalidArgument.
Result<nlohmann::json> ParseTriggerFlag(const std::string& text);

int CreateWebhook(CliEnv& env, const WebhookCreateOptions& options);
int ListWebhooks(CliEnv& env);
int DeleteWebhook(CliEnv& env, int64_t id);
int TestWebhook(CliEnv& env, int64_t id);
int ListWebhookDeliveries(CliEnv& env, int64_t id);

}  // namespace ring::cli
