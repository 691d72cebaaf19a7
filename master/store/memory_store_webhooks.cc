// MemoryStore: webhooks and their deliveries.
#include "master/store/memory_store.h"

namespace ring {

Result<int64_t> MemoryStore::CreateWebhook(const WebhookRecord& w) {
  std::lock_guard lock(mu_);
  for (const auto& [id, existing] : webhooks_)
    if (existing.name == w.name) return Conflict("a webhook named \"" + w.name + "\" exists");
  WebhookRecord stored = w;
  stored.id = next_webhook_id_++;
  stored.created_at = NowRfc3339();
  webhooks_[stored.id] = stored;
  return stored.id;
}

Result<WebhookRecord> MemoryStore::GetWebhook(int64_t id) {
  std::lock_guard lock(mu_);
  auto it = webhooks_.find(id);
  if (it == webhooks_.end()) return NotFound("webhook " + std::to_string(id) + " not found");
  return it->second;
}

Result<std::vector<WebhookRecord>> MemoryStore::ListWebhooks() {
  std::lock_guard lock(mu_);
  std::vector<WebhookRecord> out;
  for (const auto& [id, w] : webhooks_) out.push_back(w);
  return out;
}

Status MemoryStore::DeleteWebhook(int64_t id) {
  std::lock_guard lock(mu_);
  if (webhooks_.erase(id) == 0) return NotFound("webhook " + std::to_string(id) + " not found");
  std::erase_if(deliveries_, [id](const auto& entry) { return entry.second.webhook_id == id; });
  return Status::Ok();
}

Result<int64_t> MemoryStore::AddWebhookDelivery(const WebhookDelivery& d) {
  std::lock_guard lock(mu_);
  if (!webhooks_.contains(d.webhook_id))
    return NotFound("webhook " + std::to_string(d.webhook_id) + " not found");
  WebhookDelivery stored = d;
  stored.id = next_delivery_id_++;
  stored.created_at = NowRfc3339();
  deliveries_[stored.id] = stored;
  // Ended deliveries older than the newest kKeptWebhookDeliveries go.
  int64_t newer = 0;
  for (auto it = deliveries_.rbegin(); it != deliveries_.rend();) {
    if (it->second.webhook_id != d.webhook_id) {
      ++it;
      continue;
    }
    if (++newer > kKeptWebhookDeliveries && it->second.state != DeliveryState::kPending) {
      it = std::make_reverse_iterator(deliveries_.erase(std::next(it).base()));
      continue;
    }
    ++it;
  }
  return stored.id;
}

Status MemoryStore::UpdateWebhookDelivery(const WebhookDelivery& d) {
  std::lock_guard lock(mu_);
  auto it = deliveries_.find(d.id);
  if (it == deliveries_.end()) return NotFound("webhook delivery " + std::to_string(d.id) + " not found");
  it->second.state = d.state;
  it->second.attempts = d.attempts;
  it->second.last_status = d.last_status;
  it->second.last_error = d.last_error;
  it->second.delivered_at = d.delivered_at;
  return Status::Ok();
}

Result<WebhookDelivery> MemoryStore::GetWebhookDelivery(int64_t id) {
  std::lock_guard lock(mu_);
  auto it = deliveries_.find(id);
  if (it == deliveries_.end()) return NotFound("webhook delivery " + std::to_string(id) + " not found");
  return it->second;
}

Result<std::vector<WebhookDelivery>> MemoryStore::ListWebhookDeliveries(int64_t webhook_id, int64_t limit) {
  std::lock_guard lock(mu_);
  std::vector<WebhookDelivery> out;
  for (auto it = deliveries_.rbegin(); it != deliveries_.rend() && static_cast<int64_t>(out.size()) < limit;
       ++it)
    if (it->second.webhook_id == webhook_id) out.push_back(it->second);
  return out;
}

Result<std::vector<WebhookDelivery>> MemoryStore::ListPendingWebhookDeliveries() {
  std::lock_guard lock(mu_);
  std::vector<WebhookDelivery> out;
  for (const auto& [id, d] : deliveries_)
    if (d.state == DeliveryState::kPending) out.push_back(d);
  return out;
}

}  // namespace ring
