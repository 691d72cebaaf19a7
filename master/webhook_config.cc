#include "master/webhook_config.h"

#include "common/task_config.h"
#include "master/notifications/webhook_url.h"
#include "master/slurm_pool_config.h"

namespace ring {
namespace {

// A duration such as 10s, 2m or 500ms, within [min, max].
Result<std::chrono::milliseconds> Duration(const std::string& path, const YAML::Node& v,
                                           const std::string& key, std::chrono::milliseconds min,
                                           std::chrono::milliseconds max) {
  const std::string text = v.IsScalar() ? v.Scalar() : "";
  std::optional<int64_t> ms;
  if (text.size() > 2 && text.ends_with("ms") && text.find_first_not_of("0123456789") == text.size() - 2)
    ms = std::stoll(text.substr(0, text.size() - 2));
  else if (auto s = DurationSeconds(text))
    ms = *s * 1000;
  if (!ms || *ms < min.count() || *ms > max.count())
    return YamlKeyError(path, v,
                        "webhooks." + key + " must be a duration from " + std::to_string(min.count()) +
                            "ms to " + std::to_string(max.count() / 1000) + "s such as 10s or 500ms, got \"" +
                            text + "\"");
  return std::chrono::milliseconds(*ms);
}

}  // namespace

Result<WebhookSettings> ParseWebhookSettings(const std::string& path, const YAML::Node& node) {
  if (!node.IsMap())
    return YamlKeyError(path, node,
                        "webhooks must be a map with allowed_urls, timeout, retries, retry_delay");
  WebhookSettings s;
  for (const auto& kv : node) {
    const auto key = kv.first.as<std::string>();
    const auto& v = kv.second;
    if (key == "allowed_urls") {
      if (!v.IsSequence())
        return YamlKeyError(path, v,
                            "webhooks.allowed_urls must be a list of URL prefixes, hosts or addresses");
      for (const auto& entry : v) {
        if (!entry.IsScalar() || entry.Scalar().empty())
          return YamlKeyError(path, entry,
                              "webhooks.allowed_urls must hold URL prefixes, hosts or addresses");
        if (auto one = UrlAllowList::Make({entry.Scalar()}); !one.ok())
          return YamlKeyError(path, entry, one.status().message());
        s.allowed_urls.push_back(entry.Scalar());
      }
    } else if (key == "timeout") {
      auto d = Duration(path, v, key, std::chrono::milliseconds(100), std::chrono::minutes(5));
      if (!d.ok()) return d.status();
      s.timeout = *d;
    } else if (key == "retry_delay") {
      auto d = Duration(path, v, key, std::chrono::milliseconds(10), std::chrono::minutes(10));
      if (!d.ok()) return d.status();
      s.retry_delay = *d;
    } else if (key == "retries" || key == "max_queued") {
      int64_t n = -1;
      try {
        n = v.as<int64_t>();
      } catch (const YAML::Exception&) {
      }
      const int64_t max = key == "retries" ? 20 : 1000000;
      if (n < (key == "retries" ? 0 : 1) || n > max)
        return YamlKeyError(path, v,
                            "webhooks." + key + " must be an integer from " + (key == "retries" ? "0" : "1") +
                                " to " + std::to_string(max));
      (key == "retries" ? s.retries : s.max_queued) = n;
    } else {
      return YamlKeyError(path, kv.first, "unknown key \"webhooks." + key + "\"");
    }
  }
  return s;
}

}  // namespace ring
