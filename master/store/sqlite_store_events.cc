// SqliteStore: the metrics, logs and agents tables.
#include <utility>

#include "master/store/sqlite_db.h"
#include "master/store/sqlite_store.h"
#include "master/store/store_util.h"

namespace ring {
Result<int64_t> SqliteStore::AddMetrics(const std::vector<MetricReport>& reports) {
  if (reports.empty()) return int64_t{0};
  std::lock_guard lock(mu_);
  SqliteTransaction tx(*db_);
  if (!tx.status().ok()) return tx.status();
  const std::string now = NowRfc3339();
  int64_t added = 0;
  for (const MetricReport& r : reports) {
    Result<Stmt> insert = db_->Prepare(
        "INSERT INTO metrics (trial_id, kind, batches, metrics, allocation_id, reported_at) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (trial_id, kind, batches) DO NOTHING");
    if (!insert.ok()) return insert.status();
    insert->Bind(1, r.trial_id).Bind(2, r.kind).Bind(3, r.batches).Bind(4, r.metrics_json);
    insert->Bind(5, r.allocation_id).Bind(6, now);
    if (Status s = insert->Run(); !s.ok()) {
      return WithContext(s, "add " + r.kind + " metrics of trial " + std::to_string(r.trial_id) +
                                " at batch " + std::to_string(r.batches));
    }
    added += db_->Changes();
  }
  if (Status s = tx.Commit(); !s.ok()) return s;
  return added;
}

Result<std::vector<MetricReport>> SqliteStore::GetMetrics(int64_t trial_id, const std::string& kind) {
  if (!IsKnownMetricKind(kind))
    return InvalidArgument("metric kind must be training or validation, got '" + kind + "'");
  std::lock_guard lock(mu_);
  Result<Stmt> select = db_->Prepare(
      "SELECT batches, metrics, allocation_id, reported_at FROM metrics "
      "WHERE trial_id = ?1 AND kind = ?2 ORDER BY batches");
  if (!select.ok()) return select.status();
  select->Bind(1, trial_id).Bind(2, kind);
  std::vector<MetricReport> out;
  for (;;) {
    Result<bool> row = select->Step();
    if (!row.ok()) return row.status();
    if (!*row) return out;
    MetricReport r;
    r.trial_id = trial_id;
    r.kind = kind;
    r.batches = select->Int(0);
    r.metrics_json = select->Text(1);
    r.allocation_id = select->Text(2);
    r.reported_at = select->Text(3);
    out.push_back(std::move(r));
  }
}

Status SqliteStore::AddLogs(const std::vector<LogRecord>& lines) {
  if (lines.empty()) return Status::Ok();
  std::lock_guard lock(mu_);
  SqliteTransaction tx(*db_);
  if (!tx.status().ok()) return tx.status();
  for (const LogRecord& l : lines) {
    Result<Stmt> insert = db_->Prepare(
        "INSERT INTO logs (trial_id, allocation_id, rank, stream, line, ts_ms) VALUES (?1, ?2, ?3, ?4, ?5, "
        "?6)");
    if (!insert.ok()) return insert.status();
    insert->Bind(1, l.trial_id).Bind(2, l.allocation_id).Bind(3, int64_t{l.rank}).Bind(4, l.stream);
    insert->Bind(5, l.line).Bind(6, l.ts_ms);
    if (Status s = insert->Run(); !s.ok())
      return WithContext(s, "add logs of trial " + std::to_string(l.trial_id));
  }
  return tx.Commit();
}

Result<std::vector<LogRecord>> SqliteStore::GetLogs(int64_t trial_id, int rank, int64_t after_id,
                                                    int64_t limit) {
  if (Status s = CheckPage(limit, 0); !s.ok()) return s;
  std::lock_guard lock(mu_);
  Result<Stmt> select = db_->Prepare(
      "SELECT id, allocation_id, rank, stream, line, ts_ms FROM logs "
      "WHERE trial_id = ?1 AND id > ?2 AND (?3 < 0 OR rank = ?3) ORDER BY id LIMIT ?4");
  if (!select.ok()) return select.status();
  select->Bind(1, trial_id).Bind(2, after_id).Bind(3, int64_t{rank}).Bind(4, limit);
  std::vector<LogRecord> out;
  for (;;) {
    Result<bool> row = select->Step();
    if (!row.ok()) return row.status();
    if (!*row) return out;
    LogRecord l;
    l.id = select->Int(0);
    l.trial_id = trial_id;
    l.allocation_id = select->Text(1);
    l.rank = static_cast<int>(select->Int(2));
    l.stream = select->Text(3);
    l.line = select->Text(4);
    l.ts_ms = select->Int(5);
    out.push_back(std::move(l));
  }
}

Status SqliteStore::UpsertAgent(const AgentRecord& a) {
  std::lock_guard lock(mu_);
  // registered_at is set on the first insert and kept afterwards.
  Result<Stmt> upsert = db_->Prepare(
      "INSERT INTO agents (id, pool, address, state, slots, registered_at, last_seen_at) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (id) DO UPDATE SET pool = excluded.pool, "
      "address = excluded.address, state = excluded.state, slots = excluded.slots, "
      "last_seen_at = excluded.last_seen_at");
  if (!upsert.ok()) return upsert.status();
  const std::string now = NowRfc3339();
  upsert->Bind(1, a.id).Bind(2, a.pool).Bind(3, a.address).Bind(4, a.state).Bind(5, a.slots_json);
  upsert->Bind(6, now).Bind(7, a.last_seen_at.empty() ? now : a.last_seen_at);
  return WithContext(upsert->Run(), "upsert agent '" + a.id + "'");
}

Result<std::vector<AgentRecord>> SqliteStore::ListAgents() {
  std::lock_guard lock(mu_);
  Result<Stmt> select = db_->Prepare(
      "SELECT id, pool, address, state, slots, registered_at, last_seen_at FROM agents ORDER BY id");
  if (!select.ok()) return select.status();
  std::vector<AgentRecord> out;
  for (;;) {
    Result<bool> row = select->Step();
    if (!row.ok()) return row.status();
    if (!*row) return out;
    AgentRecord a;
    a.id = select->Text(0);
    a.pool = select->Text(1);
    a.address = select->Text(2);
    a.state = select->Text(3);
    a.slots_json = select->Text(4);
    a.registered_at = select->Text(5);
    a.last_seen_at = select->Text(6);
    out.push_back(std::move(a));
  }
}

}  // namespace ring
