#pragma once
// Turns what happens into webhook deliveries: an experiment reaching a state
// a webhook's EXPERIMENT_STATE_CHANGE trigger names, a trial's log line
// matching a TASK_LOG trigger's pattern (RE2, log_policies' matcher; at
// most one event per webhook, trial and trigger a minute,
// log_trigger_limiter.h). Each event is written PENDING to the store, then
// handed to the sender, which sends it on its own threads. A webhook of one
// workspace fires only for experiments in that workspace's projects.
//
// Threads: OnExperimentState and OnTrialLines run on the lifecycle's
// thread and never wait for a network peer; Reload and AddTest on the API's
// webhook worker. The webhooks in force are a snapshot guarded by mu_.
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/experiment_config.h"
#include "common/log_policy.h"
#include "master/notifications/log_trigger_limiter.h"
#include "master/notifications/webhook_sender.h"
#include "master/store/store.h"

namespace ring {

class WebhookDispatcher {
 public:
  WebhookDispatcher(Store& store, WebhookSender& sender);

  // Reads the webhooks from the store again (after one is created or deleted).
  Status Reload();
  // Experiment `exp` has just moved from `from` to exp.state (written).
  // `config` is its parsed config when known (pool and slots in the event).
  void OnExperimentState(const ExperimentRecord& exp, RunState from, const ExperimentConfig* config);
  // Lines a trial's rank printed on `node` (tokens already hidden).
  void OnTrialLines(int64_t experiment_id, const std::string& node, const std::vector<LogRecord>& lines);
  // A TEST event for webhook `w`, written PENDING; its delivery's id.
  Result<int64_t> AddTest(const WebhookRecord& w);

 private:
  struct Watched {
    WebhookRecord webhook;
    // Its TASK_LOG triggers: (index among its triggers, compiled pattern).
    std::vector<std::pair<size_t, std::shared_ptr<const LogPattern>>> patterns;
  };
  std::shared_ptr<const std::vector<Watched>> Snapshot() const;
  Result<int64_t> Add(const WebhookRecord& w, WebhookEventType type, std::string event);

  Store& store_;
  WebhookSender& sender_;
  mutable std::mutex mu_;  // guards watched_
  std::shared_ptr<const std::vector<Watched>> watched_;
  std::atomic<bool> any_log_trigger_{false};
  LogTriggerLimiter limiter_;  // the lifecycle's thread only
};

}  // namespace ring
