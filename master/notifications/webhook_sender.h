#pragma once
// Sends webhook deliveries (docs/operations.md "Webhooks"). Owns its worker
// threads and their queue of (due time, delivery id); the lifecycle only
// writes a delivery PENDING and enqueues it, so no HTTP ever runs on the
// lifecycle's thread. Before each attempt the webhook's URL is checked
// against the allow list again and its host resolved; the request goes to
// the address that passed (webhook_url.h). A 2xx answer is DELIVERED; other
// answers and transport failures are retried after retry_delay, doubled each
// time, up to `retries` times, then FAILED; a refused URL fails at once.
// Every outcome is written to the delivery's row. At Start the PENDING
// deliveries a stopped master left are queued again. Thread-safe: the queue
// is guarded by mu_; attempts run on the workers (or SendNow's caller).
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <queue>
#include <thread>
#include <utility>
#include <vector>

#include "master/notifications/webhook_settings.h"
#include "master/notifications/webhook_url.h"
#include "master/store/store.h"

namespace ring {

class WebhookSender {
 public:
  WebhookSender(Store& store, WebhookSettings settings, UrlAllowList allow,
                HostResolver resolve = ResolveHost);
  ~WebhookSender();  // Stop()
  WebhookSender(const WebhookSender&) = delete;
  WebhookSender& operator=(const WebhookSender&) = delete;

  // Starts the workers and queues every PENDING delivery in the store.
  Status Start();
  // Stops the workers after their current attempt (each bounded by the timeout).
  void Stop();
  // Queues delivery `id` to be sent now; past max_queued it is FAILED at once.
  void Enqueue(int64_t id);
  // One final attempt of delivery `id` on the calling thread (never the
  // lifecycle's or the network's): the test route. Returns it as written.
  Result<WebhookDelivery> SendNow(int64_t id);

  const WebhookSettings& settings() const { return settings_; }
  const UrlAllowList& allow_list() const { return allow_; }

 private:
  using Clock = std::chrono::steady_clock;
  using Due = std::pair<Clock::time_point, int64_t>;
  // One attempt of delivery `id`, its outcome written; the delay before the
  // next attempt when another is due.
  std::optional<std::chrono::milliseconds> Attempt(int64_t id, bool final_attempt);
  void Work();

  Store& store_;
  const WebhookSettings settings_;
  const UrlAllowList allow_;
  const HostResolver resolve_;
  std::mutex mu_;  // guards queue_ and stopping_
  std::condition_variable wake_;
  std::priority_queue<Due, std::vector<Due>, std::greater<>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace ring
