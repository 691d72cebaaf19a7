#pragma once
// master.yaml's `webhooks:` section (docs/operations.md "Webhooks").
#include <string>

#include <yaml-cpp/yaml.h>

#include "common/status.h"
#include "master/notifications/webhook_settings.h"

namespace ring {

// webhooks: {allowed_urls, timeout, retries, retry_delay, max_queued};
// errors name the key and its line of `path`. The allow list's entries are
// checked here too (UrlAllowList::Make).
Result<WebhookSettings> ParseWebhookSettings(const std::string& path, const YAML::Node& node);

}  // namespace ring
