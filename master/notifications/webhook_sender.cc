#include "master/notifications/webhook_sender.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "common/http_client.h"
#include "common/thread_role.h"
#include "master/notifications/webhook_signature.h"

namespace ring {
namespace {

struct PostOutcome {
  bool delivered = false;
  bool refused = false;  // the URL may not be sent to: no retry
  std::optional<int64_t> status;
  std::string error;
};

PostOutcome Post(const WebhookRecord& w, const WebhookDelivery& d, const UrlAllowList& allow,
                 const HostResolver& resolve, std::chrono::milliseconds timeout) {
  PostOutcome out;
  auto url = ParseWebhookUrl(w.url);
  if (!url.ok()) {
    out.refused = true;
    out.error = "url " + url.status().message();
    return out;
  }
  auto addresses = CheckWebhookTarget(*url, allow, resolve);
  if (!addresses.ok()) {
    out.refused = addresses.status().code() == ErrorCode::kInvalidArgument;
    out.error = "refused: " + addresses.status().message();
    if (!out.refused) out.error = addresses.status().message();
    return out;
  }
  const bool v6 = url->host.find(':') != std::string::npos;
  HttpClient client(Url{url->scheme, v6 ? "[" + url->host + "]" : url->host, url->port, ""}, timeout);
  client.PinAddress(addresses->front());
  const int64_t now_s =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  client.SetHeader(kTimestampHeader, std::to_string(now_s));
  client.SetHeader(kSignatureHeader, WebhookSignature(w.secret, now_s, d.event));
  client.SetHeader("X-Ring-Delivery", std::to_string(d.id));
  client.SetHeader("X-Ring-Event", std::string(ToString(d.event_type)));
  auto res = client.Request("POST", url->target, d.event, "application/json");
  if (!res.ok()) {
    out.error = res.status().message();
    return out;
  }
  out.status = res->status;
  if (res->status >= 200 && res->status < 300) {
    out.delivered = true;
    return out;
  }
  out.error = "HTTP " + std::to_string(res->status);
  if (!res->body.empty()) out.error += ": " + res->body.substr(0, 200);
  return out;
}

}  // namespace

WebhookSender::WebhookSender(Store& store, WebhookSettings settings, UrlAllowList allow, HostResolver resolve)
    : store_(store), settings_(std::move(settings)), allow_(std::move(allow)), resolve_(std::move(resolve)) {}

WebhookSender::~WebhookSender() {
  Stop();
}

Status WebhookSender::Start() {
  for (int i = 0; i < settings_.workers; ++i)
    workers_.emplace_back([this] {
      SetThreadName("ring-webhooks");
      Work();
    });
  auto pending = store_.ListPendingWebhookDeliveries();
  if (!pending.ok()) return pending.status();
  if (!pending->empty()) spdlog::info("[webhooks] {} pending deliveries resumed", pending->size());
  for (const auto& d : *pending) Enqueue(d.id);
  return Status::Ok();
}

void WebhookSender::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
  workers_.clear();
}

void WebhookSender::Enqueue(int64_t id) {
  {
    std::lock_guard lock(mu_);
    if (static_cast<int64_t>(queue_.size()) < settings_.max_queued) {
      queue_.emplace(Clock::now(), id);
      wake_.notify_one();
      return;
    }
  }
  auto d = store_.GetWebhookDelivery(id);
  if (!d.ok()) return;
  d->state = DeliveryState::kFailed;
  d->last_error = "not sent: " + std::to_string(settings_.max_queued) +
                  " deliveries were waiting already (webhooks.max_queued)";
  spdlog::warn("[webhooks] webhook {} delivery {}: {}", d->webhook_id, id, d->last_error);
  (void)store_.UpdateWebhookDelivery(*d);
}

Result<WebhookDelivery> WebhookSender::SendNow(int64_t id) {
  (void)Attempt(id, true);
  return store_.GetWebhookDelivery(id);
}

std::optional<std::chrono::milliseconds> WebhookSender::Attempt(int64_t id, bool final_attempt) {
  auto d = store_.GetWebhookDelivery(id);
  if (!d.ok() || d->state != DeliveryState::kPending) return std::nullopt;  // its webhook was deleted
  auto w = store_.GetWebhook(d->webhook_id);
  if (!w.ok()) return std::nullopt;
  const PostOutcome out = Post(*w, *d, allow_, resolve_, settings_.timeout);
  ++d->attempts;
  d->last_status = out.status;
  d->last_error = out.error;
  std::optional<std::chrono::milliseconds> retry;
  if (out.delivered) {
    d->state = DeliveryState::kDelivered;
    d->delivered_at = NowRfc3339();
  } else if (out.refused || final_attempt || d->attempts > settings_.retries) {
    d->state = DeliveryState::kFailed;
  } else {
    const int64_t doublings = std::min<int64_t>(d->attempts - 1, 16);
    retry = std::min<std::chrono::milliseconds>(settings_.retry_delay * (int64_t{1} << doublings),
                                                std::chrono::seconds(60));
  }
  if (Status s = store_.UpdateWebhookDelivery(*d); !s.ok()) {
    spdlog::error("[webhooks] webhook {} delivery {}: cannot record its outcome: {}", w->id, id, s.message());
    return std::nullopt;
  }
  if (out.delivered)
    spdlog::info("[webhooks] webhook {} delivery {} delivered (attempt {}, HTTP {})", w->id, id, d->attempts,
                 *out.status);
  else
    spdlog::warn("[webhooks] webhook {} delivery {} attempt {} failed{}: {}", w->id, id, d->attempts,
                 retry ? ", will retry" : "", out.error);
  return retry;
}

void WebhookSender::Work() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    if (queue_.empty()) {
      wake_.wait(lock);
      continue;
    }
    const auto [due, id] = queue_.top();
    if (due > Clock::now()) {
      wake_.wait_until(lock, due);
      continue;
    }
    queue_.pop();
    lock.unlock();
    const auto retry = Attempt(id, false);
    lock.lock();
    if (retry) queue_.emplace(Clock::now() + *retry, id);
  }
}

}  // namespace ring
