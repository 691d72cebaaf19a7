#include "master/notifications/webhook_dispatcher.h"

#include <spdlog/spdlog.h>

#include <ctime>
#include <functional>

#include "master/notifications/webhook_events.h"
#include "master/notifications/webhook_signature.h"

namespace ring {
namespace {

int64_t NowSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Seconds since the epoch of an RFC 3339 UTC time the store wrote; 0 when unreadable.
int64_t EpochSeconds(const std::string& rfc3339) {
  std::tm tm{};
  if (std::sscanf(rfc3339.c_str(), "%d-%d-%dT%d:%d:%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                  &tm.tm_min, &tm.tm_sec) != 6)
    return 0;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<int64_t>(timegm(&tm));
}

// The workspace of the project an experiment is in, looked up once and only
// when a webhook of one workspace is about to fire (cluster-wide ones need
// none). 0 when the project is gone: no workspace webhook fires then.
class ExperimentWorkspace {
 public:
  ExperimentWorkspace(Store& store, std::function<Result<int64_t>()> project)
      : store_(store), project_(project) {}
  bool Watches(const WebhookRecord& w) {
    if (!w.workspace_id) return true;
    if (!known_) {
      known_ = true;
      auto project = project_();
      auto p = project.ok() ? store_.GetProject(*project) : Result<ProjectRecord>(project.status());
      if (p.ok())
        id_ = p->workspace_id;
      else
        spdlog::warn("[webhooks] cannot tell an experiment's workspace: {}", p.status().message());
    }
    return *w.workspace_id == id_;
  }

 private:
  Store& store_;
  std::function<Result<int64_t>()> project_;
  bool known_ = false;
  int64_t id_ = 0;
};

}  // namespace

WebhookDispatcher::WebhookDispatcher(Store& store, WebhookSender& sender)
    : store_(store), sender_(sender), watched_(std::make_shared<std::vector<Watched>>()) {}

Status WebhookDispatcher::Reload() {
  auto list = store_.ListWebhooks();
  if (!list.ok()) return list.status();
  auto watched = std::make_shared<std::vector<Watched>>();
  bool any_log = false;
  for (auto& w : *list) {
    Watched entry{std::move(w), {}};
    for (size_t i = 0; i < entry.webhook.triggers.size(); ++i) {
      const WebhookTrigger& t = entry.webhook.triggers[i];
      if (t.type != WebhookTriggerType::kTaskLog) continue;
      std::string error;
      std::shared_ptr<const LogPattern> pattern = LogPattern::Compile(t.regex, error);
      if (!pattern) {
        spdlog::error("[webhooks] webhook {}: trigger {} has a pattern RE2 refuses: {}", entry.webhook.id, i,
                      error);
        continue;
      }
      entry.patterns.emplace_back(i, std::move(pattern));
      any_log = true;
    }
    watched->push_back(std::move(entry));
  }
  std::lock_guard lock(mu_);
  watched_ = std::move(watched);
  any_log_trigger_ = any_log;
  return Status::Ok();
}

std::shared_ptr<const std::vector<WebhookDispatcher::Watched>> WebhookDispatcher::Snapshot() const {
  std::lock_guard lock(mu_);
  return watched_;
}

Result<int64_t> WebhookDispatcher::Add(const WebhookRecord& w, WebhookEventType type, std::string event) {
  WebhookDelivery d;
  d.webhook_id = w.id;
  d.event_type = type;
  d.event = std::move(event);
  auto id = store_.AddWebhookDelivery(d);
  if (!id.ok()) {
    spdlog::error("[webhooks] webhook {}: cannot record a {} event: {}", w.id, ToString(type),
                  id.status().message());
    return id.status();
  }
  return *id;
}

void WebhookDispatcher::OnExperimentState(const ExperimentRecord& exp, RunState from,
                                          const ExperimentConfig* config) {
  const auto watched = Snapshot();
  ExperimentWorkspace workspace(store_, [&exp]() -> Result<int64_t> { return exp.project_id; });
  for (const Watched& entry : *watched) {
    const WebhookRecord& w = entry.webhook;
    bool wanted = false;
    for (const auto& t : w.triggers)
      wanted = wanted || (t.type == WebhookTriggerType::kExperimentStateChange && t.state == exp.state);
    if (!wanted || !workspace.Watches(w)) continue;
    ExperimentEventFacts facts;
    facts.id = exp.id;
    facts.name = exp.name;
    facts.owner = exp.owner;
    facts.state = ToString(exp.state);
    facts.previous = ToString(from);
    facts.resource_pool = config ? config->resources.resource_pool : "";
    facts.slots_per_trial = config ? config->resources.slots_per_trial : 0;
    const int64_t now = NowSeconds();
    const int64_t created = EpochSeconds(exp.created_at);
    facts.duration_s = created > 0 && now > created ? now - created : 0;
    auto id = Add(w, WebhookEventType::kExperimentStateChange,
                  ExperimentStateEvent(w.type, NewEventId(), now, facts));
    if (id.ok()) {
      spdlog::info("[webhooks] webhook {} delivery {}: experiment {} is {}", w.id, *id, exp.id, facts.state);
      sender_.Enqueue(*id);
    }
  }
}

void WebhookDispatcher::OnTrialLines(int64_t experiment_id, const std::string& node,
                                     const std::vector<LogRecord>& lines) {
  if (!any_log_trigger_) return;
  const auto watched = Snapshot();
  const auto now = std::chrono::steady_clock::now();
  ExperimentWorkspace workspace(store_, [this, experiment_id]() -> Result<int64_t> {
    auto e = store_.GetExperiment(experiment_id);
    if (!e.ok()) return e.status();
    return e->project_id;
  });
  for (const Watched& entry : *watched) {
    for (const auto& [index, pattern] : entry.patterns) {
      for (const LogRecord& line : lines) {
        if (!pattern->Matches(line.line)) continue;
        if (!workspace.Watches(entry.webhook)) break;
        // One event per trial a minute; the lines after it in the window are not looked at.
        if (!limiter_.Admit(entry.webhook.id, line.trial_id, index, now)) break;
        const WebhookRecord& w = entry.webhook;
        LogEventFacts facts{experiment_id, line.trial_id, node,
                            line.rank,     line.line,     w.triggers[index].regex};
        auto id = Add(w, WebhookEventType::kTaskLog, TaskLogEvent(w.type, NewEventId(), NowSeconds(), facts));
        if (id.ok()) {
          spdlog::info("[webhooks] webhook {} delivery {}: trial {} printed a line matching trigger {}", w.id,
                       *id, line.trial_id, index);
          sender_.Enqueue(*id);
        }
        break;
      }
    }
  }
}

Result<int64_t> WebhookDispatcher::AddTest(const WebhookRecord& w) {
  return Add(w, WebhookEventType::kTest, TestEvent(w.type, NewEventId(), NowSeconds(), w.name));
}

}  // namespace ring
