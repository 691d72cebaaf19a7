#pragma once
// `ring webhook create|list|delete|test|deliveries`: where the master posts
// events (docs/rest.md "Webhooks"). Cluster admins create, delete and test
// cluster-wide webhooks, a workspace's admins those of their workspace
// (--workspace); the signing secret is printed once, at creation.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/cli_env.h"

namespace ring::cli {

struct WebhookCreateOptions {
  std::string name;
  std::string url;
  std::string type = "default";       // default or slack
  std::vector<std::string> triggers;  // state=COMPLETED, log=REGEX
  std::string workspace;              // id or name; empty: cluster-wide
};

struct WebhookArgs {
  WebhookCreateOptions create;
  std::string workspace;  // list --workspace
  int64_t id = 0;
};

// Adds `ring webhook ...` to `app`; the chosen command sets `action`.
void AddWebhookCommands(CLI::App& app, WebhookArgs& a, std::function<int(CliEnv&)>& action);

// The trigger of one --trigger: {trigger_type, condition}, or kInvalidArgument.
Result<nlohmann::json> ParseTriggerFlag(const std::string& text);

int CreateWebhook(CliEnv& env, const WebhookCreateOptions& options);
int ListWebhooks(CliEnv& env, const std::string& workspace);  // workspace: id, name or empty
int DeleteWebhook(CliEnv& env, int64_t id);
int TestWebhook(CliEnv& env, int64_t id);
int ListWebhookDeliveries(CliEnv& env, int64_t id);

}  // namespace ring::cli
