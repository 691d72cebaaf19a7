// SqliteStore: webhooks and their deliveries.
#include "master/store/record_json.h"
#include "master/store/sqlite_db.h"
#include "master/store/sqlite_store.h"

namespace ring {
namespace {

constexpr const char* kWebhookColumns =
    "SELECT id, name, url, type, triggers, secret, created_by, created_at, workspace_id FROM webhooks ";
constexpr const char* kDeliveryColumns =
    "SELECT id, webhook_id, event_type, event, state, attempts, last_status, last_error, created_at, "
    "delivered_at FROM webhook_deliveries ";

Result<WebhookRecord> ReadWebhook(const Stmt& s) {
  WebhookRecord w;
  w.id = s.Int(0);
  w.name = s.Text(1);
  w.url = s.Text(2);
  auto type = ParseWebhookType(s.Text(3));
  if (!type) return Internal("webhook " + std::to_string(w.id) + " has an unknown type " + s.Text(3));
  w.type = *type;
  auto triggers = WebhookTriggersFromJson(s.Text(4));
  if (!triggers.ok()) return triggers.status();
  w.triggers = *std::move(triggers);
  w.secret = s.Text(5);
  w.created_by = s.Text(6);
  w.created_at = s.Text(7);
  w.workspace_id = s.OptInt(8);
  return w;
}

Result<WebhookDelivery> ReadDelivery(const Stmt& s) {
  WebhookDelivery d;
  d.id = s.Int(0);
  d.webhook_id = s.Int(1);
  auto type = ParseWebhookEventType(s.Text(2));
  auto state = ParseDeliveryState(s.Text(4));
  if (!type || !state)
    return Internal("webhook delivery " + std::to_string(d.id) + " has an unknown type or state");
  d.event_type = *type;
  d.event = s.Text(3);
  d.state = *state;
  d.attempts = s.Int(5);
  d.last_status = s.OptInt(6);
  d.last_error = s.Text(7);
  d.created_at = s.Text(8);
  d.delivered_at = s.Text(9);
  return d;
}

template <typename T, typename Read>
Result<std::vector<T>> ReadWebhookRows(Stmt& select, Read read) {
  std::vector<T> out;
  for (;;) {
    Result<bool> row = select.Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    auto item = read(select);
    if (!item.ok()) return item.status();
    out.push_back(*std::move(item));
  }
  return out;
}

}  // namespace

Result<int64_t> SqliteStore::CreateWebhook(const WebhookRecord& w) {
  std::lock_guard lock(mu_);
  Result<Stmt> insert = db_->Prepare(
      "INSERT INTO webhooks (name, url, type, triggers, secret, created_by, created_at, workspace_id) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  if (!insert.ok()) return insert.status();
  insert->Bind(1, w.name).Bind(2, w.url).Bind(3, ToString(w.type)).Bind(4, WebhookTriggersJson(w.triggers));
  insert->Bind(5, w.secret).Bind(6, w.created_by).Bind(7, NowRfc3339());
  insert->Bind(8, w.workspace_id);
  if (Status s = insert->Run(); !s.ok()) {
    if (s.code() == ErrorCode::kConflict) return Conflict("a webhook named \"" + w.name + "\" exists");
    return WithContext(s, "create webhook " + w.name);
  }
  return db_->LastInsertRowid();
}

Result<WebhookRecord> SqliteStore::GetWebhook(int64_t id) {
  std::lock_guard lock(mu_);
  Result<Stmt> select = db_->Prepare((std::string(kWebhookColumns) + "WHERE id = ?1").c_str());
  if (!select.ok()) return select.status();
  select->Bind(1, id);
  Result<bool> row = select->Step();
  if (!row.ok()) return row.status();
  if (!*row) return NotFound("webhook " + std::to_string(id) + " not found");
  return ReadWebhook(*select);
}

Result<std::vector<WebhookRecord>> SqliteStore::ListWebhooks() {
  std::lock_guard lock(mu_);
  Result<Stmt> select = db_->Prepare((std::string(kWebhookColumns) + "ORDER BY id").c_str());
  if (!select.ok()) return select.status();
  return ReadWebhookRows<WebhookRecord>(*select, ReadWebhook);
}

Status SqliteStore::DeleteWebhook(int64_t id) {
  std::lock_guard lock(mu_);
  SqliteTransaction tx(*db_);
  if (!tx.status().ok()) return tx.status();
  Result<Stmt> deliveries = db_->Prepare("DELETE FROM webhook_deliveries WHERE webhook_id = ?1");
  if (!deliveries.ok()) return deliveries.status();
  deliveries->Bind(1, id);
  if (Status s = deliveries->Run(); !s.ok()) return WithContext(s, "delete webhook deliveries");
  Result<Stmt> del = db_->Prepare("DELETE FROM webhooks WHERE id = ?1");
  if (!del.ok()) return del.status();
  del->Bind(1, id);
  if (Status s = del->Run(); !s.ok()) return WithContext(s, "delete webhook " + std::to_string(id));
  if (db_->Changes() == 0) return NotFound("webhook " + std::to_string(id) + " not found");
  return tx.Commit();
}

Result<int64_t> SqliteStore::AddWebhookDelivery(const WebhookDelivery& d) {
  std::lock_guard lock(mu_);
  SqliteTransaction tx(*db_);
  if (!tx.status().ok()) return tx.status();
  Result<Stmt> exists = db_->Prepare("SELECT 1 FROM webhooks WHERE id = ?1");
  if (!exists.ok()) return exists.status();
  exists->Bind(1, d.webhook_id);
  Result<bool> found = exists->Step();
  if (!found.ok()) return found.status();
  if (!*found) return NotFound("webhook " + std::to_string(d.webhook_id) + " not found");
  (void)exists->Step();
  Result<Stmt> insert = db_->Prepare(
      "INSERT INTO webhook_deliveries (webhook_id, event_type, event, state, attempts, last_status, "
      "last_error, created_at, delivered_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
  if (!insert.ok()) return insert.status();
  insert->Bind(1, d.webhook_id).Bind(2, ToString(d.event_type)).Bind(3, d.event).Bind(4, ToString(d.state));
  insert->Bind(5, d.attempts).Bind(6, d.last_status).Bind(7, d.last_error).Bind(8, NowRfc3339());
  insert->BindTextOrNull(9, d.delivered_at);
  if (Status s = insert->Run(); !s.ok()) return WithContext(s, "add webhook delivery");
  const int64_t id = db_->LastInsertRowid();
  // The history is bounded: ended deliveries older than the newest kept ones go.
  Result<Stmt> trim = db_->Prepare(
      "DELETE FROM webhook_deliveries WHERE webhook_id = ?1 AND state <> 'PENDING' AND id <= "
      "(SELECT id FROM webhook_deliveries WHERE webhook_id = ?1 ORDER BY id DESC LIMIT 1 OFFSET ?2)");
  if (!trim.ok()) return trim.status();
  trim->Bind(1, d.webhook_id).Bind(2, kKeptWebhookDeliveries);
  if (Status s = trim->Run(); !s.ok()) return WithContext(s, "trim webhook deliveries");
  if (Status s = tx.Commit(); !s.ok()) return s;
  return id;
}

Status SqliteStore::UpdateWebhookDelivery(const WebhookDelivery& d) {
  std::lock_guard lock(mu_);
  Result<Stmt> update = db_->Prepare(
      "UPDATE webhook_deliveries SET state = ?2, attempts = ?3, last_status = ?4, last_error = ?5, "
      "delivered_at = ?6 WHERE id = ?1");
  if (!update.ok()) return update.status();
  update->Bind(1, d.id).Bind(2, ToString(d.state)).Bind(3, d.attempts).Bind(4, d.last_status);
  update->Bind(5, d.last_error).BindTextOrNull(6, d.delivered_at);
  if (Status s = update->Run(); !s.ok()) return WithContext(s, "update webhook delivery");
  if (db_->Changes() == 0) return NotFound("webhook delivery " + std::to_string(d.id) + " not found");
  return Status::Ok();
}

Result<WebhookDelivery> SqliteStore::GetWebhookDelivery(int64_t id) {
  std::lock_guard lock(mu_);
  Result<Stmt> select = db_->Prepare((std::string(kDeliveryColumns) + "WHERE id = ?1").c_str());
  if (!select.ok()) return select.status();
  select->Bind(1, id);
  Result<bool> row = select->Step();
  if (!row.ok()) return row.status();
  if (!*row) return NotFound("webhook delivery " + std::to_string(id) + " not found");
  return ReadDelivery(*select);
}

Result<std::vector<WebhookDelivery>> SqliteStore::ListWebhookDeliveries(int64_t webhook_id, int64_t limit) {
  std::lock_guard lock(mu_);
  Result<Stmt> select = db_->Prepare(
      (std::string(kDeliveryColumns) + "WHERE webhook_id = ?1 ORDER BY id DESC LIMIT ?2").c_str());
  if (!select.ok()) return select.status();
  select->Bind(1, webhook_id).Bind(2, limit);
  return ReadWebhookRows<WebhookDelivery>(*select, ReadDelivery);
}

Result<std::vector<WebhookDelivery>> SqliteStore::ListPendingWebhookDeliveries() {
  std::lock_guard lock(mu_);
  Result<Stmt> select =
      db_->Prepare((std::string(kDeliveryColumns) + "WHERE state = 'PENDING' ORDER BY id").c_str());
  if (!select.ok()) return select.status();
  return ReadWebhookRows<WebhookDelivery>(*select, ReadDelivery);
}

}  // namespace ring
