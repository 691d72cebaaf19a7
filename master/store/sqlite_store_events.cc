// SqliteStore: the metrics (with their group commit), logs and agents tables.
#include <algorithm>
#include <exception>
#include <map>
#include <utility>

#include "master/store/record_json.h"
#include "master/store/sqlite_db.h"
#include "master/store/sqlite_store.h"
#include "master/store/store_util.h"

namespace ring {
// One AddMetrics call waiting for its commit.
struct SqliteStore::MetricWrite {
  const std::vector<MetricReport>* reports;
  Result<int64_t> result = int64_t{0};
  bool raised_trial = false;
  bool done = false;
};

// Group commit: a caller whose reports find no commit under way commits
// them, with those of every caller that arrived meanwhile, in one
// transaction; the callers that arrive during that commit wait, and the
// first of them to wake commits the next group. Each caller's reports are in
// a savepoint of their own, so one caller's bad report fails that caller alone.
Result<int64_t> SqliteStore::AddMetrics(const std::vector<MetricReport>& reports) {
  const WriteNotice changes(metrics_generation_);
  if (reports.empty()) return int64_t{0};
  MetricWrite mine{&reports};
  std::vector<MetricWrite*> group;
  {
    std::unique_lock lock(group_mu_);
    group_waiting_.push_back(&mine);
    group_cv_.wait(lock, [&] { return mine.done || !group_committing_; });
    if (mine.done) {
      if (mine.raised_trial) experiments_generation_.fetch_add(1, std::memory_order_acq_rel);
      return std::move(mine.result);
    }
    group_committing_ = true;
    group.swap(group_waiting_);
  }
  try {
    CommitMetricGroup(group);
  } catch (const std::exception& e) {  // never leave the waiting callers without an answer
    for (MetricWrite* w : group) w->result = Internal(std::string("add metrics: ") + e.what());
  }
  {
    std::lock_guard lock(group_mu_);
    for (MetricWrite* w : group) w->done = true;
    group_committing_ = false;
  }
  group_cv_.notify_all();
  if (mine.raised_trial) experiments_generation_.fetch_add(1, std::memory_order_acq_rel);
  return std::move(mine.result);
}

void SqliteStore::CommitMetricGroup(const std::vector<MetricWrite*>& group) {
  std::lock_guard lock(mu_);
  SqliteTransaction tx(*db_);
  if (!tx.status().ok()) {
    for (MetricWrite* w : group) w->result = tx.status();
    return;
  }
  const std::string now = NowRfc3339();
  for (MetricWrite* w : group) {
    if (Status s = db_->Exec("SAVEPOINT metric_write", "add metrics"); !s.ok()) {
      w->result = s;
      continue;
    }
    w->result = InsertMetricsLocked(*w->reports, now, w->raised_trial);
    if (!w->result.ok()) {
      w->raised_trial = false;
      (void)db_->Exec("ROLLBACK TO metric_write", "add metrics");
    }
    (void)db_->Exec("RELEASE metric_write", "add metrics");
  }
  if (Status s = tx.Commit(); !s.ok()) {
    for (MetricWrite* w : group) {
      if (w->result.ok()) w->result = s;  // nothing of the group is stored
      w->raised_trial = false;
    }
  }
}

Result<int64_t> SqliteStore::InsertMetricsLocked(const std::vector<MetricReport>& reports,
                                                 const std::string& now, bool& raised_trial) {
  int64_t added = 0;
  std::map<int64_t, int64_t> trained;  // trial → its largest training report here
  for (const MetricReport& r : reports) {
    Result<Stmt> insert = db_->Prepare(
        "INSERT INTO metrics (trial_id, kind, batches, metrics, allocation_id, reported_at) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (trial_id, kind, batches) DO NOTHING");
    if (!insert.ok()) return insert.status();
    insert->Bind(1, r.trial_id).Bind(2, ToString(r.kind)).Bind(3, r.batches).Bind(4, r.metrics_json);
    insert->Bind(5, r.allocation_id).Bind(6, now);
    if (Status s = insert->Run(); !s.ok()) {
      return WithContext(s, "add " + std::string(ToString(r.kind)) + " metrics of trial " +
                                std::to_string(r.trial_id) + " at batch " + std::to_string(r.batches));
    }
    added += db_->Changes();
    if (r.kind == MetricKind::kTraining) trained[r.trial_id] = std::max(trained[r.trial_id], r.batches);
  }
  for (const auto& [trial_id, batches] : trained) {
    Result<Stmt> raise =
        db_->Prepare("UPDATE trials SET total_batches = ?2 WHERE id = ?1 AND total_batches < ?2");
    if (!raise.ok()) return raise.status();
    raise->Bind(1, trial_id).Bind(2, batches);
    if (Status s = raise->Run(); !s.ok())
      return WithContext(s, "raise the total batches of trial " + std::to_string(trial_id));
    raised_trial |= db_->Changes() > 0;
  }
  return added;
}

Result<std::vector<MetricReport>> SqliteStore::GetMetrics(int64_t trial_id, MetricKind kind) {
  std::lock_guard lock(mu_);
  Result<Stmt> select = db_->Prepare(
      "SELECT batches, metrics, allocation_id, reported_at FROM metrics "
      "WHERE trial_id = ?1 AND kind = ?2 ORDER BY batches");
  if (!select.ok()) return select.status();
  select->Bind(1, trial_id).Bind(2, ToString(kind));
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

Status SqliteStore::InsertLogs(LogOwner owner, const std::vector<LogRecord>& lines) {
  if (lines.empty()) return Status::Ok();
  const bool trial = owner == LogOwner::kTrial;
  std::lock_guard lock(mu_);
  SqliteTransaction tx(*db_);
  if (!tx.status().ok()) return tx.status();
  for (const LogRecord& l : lines) {
    Result<Stmt> insert =
        db_->Prepare(trial ? "INSERT INTO logs (trial_id, allocation_id, rank, stream, line, ts_ms) VALUES "
                             "(?1, ?2, ?3, ?4, ?5, ?6)"
                           : "INSERT INTO task_logs (task_id, allocation_id, rank, stream, line, ts_ms) "
                             "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
    if (!insert.ok()) return insert.status();
    const int64_t id = trial ? l.trial_id : l.task_id;
    insert->Bind(1, id).Bind(2, l.allocation_id).Bind(3, int64_t{l.rank}).Bind(4, l.stream);
    insert->Bind(5, l.line).Bind(6, l.ts_ms);
    if (Status s = insert->Run(); !s.ok())
      return WithContext(s, std::string("add logs of ") + (trial ? "trial " : "task ") + std::to_string(id));
  }
  return tx.Commit();
}

Result<std::vector<LogRecord>> SqliteStore::SelectLogs(LogOwner owner, int64_t owner_id, int rank,
                                                       int64_t after_id, int64_t limit) {
  if (Status s = CheckPage(limit, 0); !s.ok()) return s;
  const bool trial = owner == LogOwner::kTrial;
  std::lock_guard lock(mu_);
  Result<Stmt> select =
      db_->Prepare(trial ? "SELECT id, allocation_id, rank, stream, line, ts_ms FROM logs "
                           "WHERE trial_id = ?1 AND id > ?2 AND (?3 < 0 OR rank = ?3) ORDER BY id LIMIT ?4"
                         : "SELECT id, allocation_id, rank, stream, line, ts_ms FROM task_logs "
                           "WHERE task_id = ?1 AND id > ?2 AND (?3 < 0 OR rank = ?3) ORDER BY id LIMIT ?4");
  if (!select.ok()) return select.status();
  select->Bind(1, owner_id).Bind(2, after_id).Bind(3, int64_t{rank}).Bind(4, limit);
  std::vector<LogRecord> out;
  for (;;) {
    Result<bool> row = select->Step();
    if (!row.ok()) return row.status();
    if (!*row) return out;
    LogRecord l;
    l.id = select->Int(0);
    (trial ? l.trial_id : l.task_id) = owner_id;
    l.allocation_id = select->Text(1);
    l.rank = static_cast<int>(select->Int(2));
    l.stream = select->Text(3);
    l.line = select->Text(4);
    l.ts_ms = select->Int(5);
    out.push_back(std::move(l));
  }
}

Status SqliteStore::AddLogs(const std::vector<LogRecord>& lines) {
  return InsertLogs(LogOwner::kTrial, lines);
}

Result<std::vector<LogRecord>> SqliteStore::GetLogs(int64_t trial_id, int rank, int64_t after_id,
                                                    int64_t limit) {
  return SelectLogs(LogOwner::kTrial, trial_id, rank, after_id, limit);
}

Result<bool> SqliteStore::AddLogPolicyMatch(const LogPolicyMatch& m) {
  const WriteNotice changes(experiments_generation_);  // a trial's log signal
  std::lock_guard lock(mu_);
  Result<Stmt> insert = db_->Prepare(
      "INSERT INTO log_policy_matches (trial_id, policy, action, node, allocation_id, rank, line, "
      "matched_at) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT (trial_id, policy, node) DO NOTHING");
  if (!insert.ok()) return insert.status();
  insert->Bind(1, m.trial_id).Bind(2, m.policy).Bind(3, std::string(ToString(m.action))).Bind(4, m.node);
  insert->Bind(5, m.allocation_id).Bind(6, int64_t{m.rank}).Bind(7, m.line).Bind(8, NowRfc3339());
  if (Status s = insert->Run(); !s.ok())
    return WithContext(s, "add a log policy match of trial " + std::to_string(m.trial_id));
  return db_->Changes() > 0;
}

Result<std::vector<LogPolicyMatch>> SqliteStore::ListLogPolicyMatches(int64_t trial_id) {
  std::lock_guard lock(mu_);
  Result<Stmt> select = db_->Prepare(
      "SELECT policy, action, node, allocation_id, rank, line, matched_at FROM log_policy_matches "
      "WHERE trial_id = ?1 ORDER BY id");
  if (!select.ok()) return select.status();
  select->Bind(1, trial_id);
  std::vector<LogPolicyMatch> out;
  for (;;) {
    Result<bool> row = select->Step();
    if (!row.ok()) return row.status();
    if (!*row) return out;
    LogPolicyMatch m;
    m.trial_id = trial_id;
    m.policy = select->Text(0);
    const std::string action = select->Text(1);
    const auto parsed = ParseLogPolicyAction(action);
    if (!parsed)
      return Internal("trial " + std::to_string(trial_id) + " has a log policy match of unknown action '" +
                      action + "'");
    m.action = *parsed;
    m.node = select->Text(2);
    m.allocation_id = select->Text(3);
    m.rank = static_cast<int>(select->Int(4));
    m.line = select->Text(5);
    m.matched_at = select->Text(6);
    out.push_back(std::move(m));
  }
}

Status SqliteStore::UpsertAgent(const AgentRecord& a) {
  std::lock_guard lock(mu_);
  // registered_at is set on the first insert and kept afterwards.
  Result<Stmt> upsert = db_->Prepare(
      "INSERT INTO agents (id, pool, address, state, slots, registered_at, last_seen_at, runs_as_owner) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT (id) DO UPDATE SET pool = excluded.pool, "
      "address = excluded.address, state = excluded.state, slots = excluded.slots, "
      "last_seen_at = excluded.last_seen_at, runs_as_owner = excluded.runs_as_owner");
  if (!upsert.ok()) return upsert.status();
  const std::string now = NowRfc3339();
  upsert->Bind(1, a.id).Bind(2, a.pool).Bind(3, a.address).Bind(4, std::string(ToString(a.state)));
  upsert->Bind(5, SlotsJson(a.slots));
  upsert->Bind(6, now).Bind(7, a.last_seen_at.empty() ? now : a.last_seen_at);
  upsert->Bind(8, int64_t{a.runs_as_owner});
  return WithContext(upsert->Run(), "upsert agent '" + a.id + "'");
}

Result<std::vector<AgentRecord>> SqliteStore::ListAgents() {
  std::lock_guard lock(mu_);
  Result<Stmt> select = db_->Prepare(
      "SELECT id, pool, address, state, slots, registered_at, last_seen_at, enabled, draining, runs_as_owner "
      "FROM agents "
      "ORDER BY id");
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
    auto state = ParseAgentState(select->Text(3));
    if (!state) return Internal("agent '" + a.id + "' has an unknown state '" + select->Text(3) + "'");
    a.state = *state;
    auto slots = SlotsFromJson(select->Text(4));
    if (!slots.ok()) return WithContext(slots.status(), "agent '" + a.id + "'");
    a.slots = std::move(*slots);
    a.registered_at = select->Text(5);
    a.last_seen_at = select->Text(6);
    a.enabled = select->Int(7) != 0;
    a.draining = select->Int(8) != 0;
    a.runs_as_owner = select->Int(9) != 0;
    out.push_back(std::move(a));
  }
}

Status SqliteStore::SetAgentSchedulable(const std::string& id, bool enabled, bool draining) {
  std::lock_guard lock(mu_);
  Result<Stmt> update = db_->Prepare("UPDATE agents SET enabled = ?2, draining = ?3 WHERE id = ?1");
  if (!update.ok()) return update.status();
  update->Bind(1, id).Bind(2, int64_t{enabled}).Bind(3, int64_t{!enabled && draining});
  if (Status s = update->Run(); !s.ok()) return WithContext(s, "update agent '" + id + "'");
  if (db_->Changes() == 0) return NotFound("agent '" + id + "' not found");
  return Status::Ok();
}

Status SqliteStore::SetResourceOverrides(int64_t experiment_id, const ResourceOverrides& o) {
  std::lock_guard lock(mu_);
  Result<Stmt> upsert = db_->Prepare(
      "INSERT INTO experiment_resources (experiment_id, priority, weight, max_slots, updated_at, "
      "admin_priority, admin_max_slots) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (experiment_id) DO "
      "UPDATE SET priority = excluded.priority, weight = excluded.weight, max_slots = excluded.max_slots, "
      "updated_at = excluded.updated_at, admin_priority = excluded.admin_priority, "
      "admin_max_slots = excluded.admin_max_slots");
  if (!upsert.ok()) return upsert.status();
  upsert->Bind(1, experiment_id)
      .Bind(2, o.priority)
      .Bind(3, o.weight)
      .Bind(4, o.max_slots)
      .Bind(5, NowRfc3339())
      .Bind(6, o.admin_priority)
      .Bind(7, o.admin_max_slots);
  Status s = upsert->Run();
  if (s.ok()) overrides_[experiment_id] = o;
  if (s.code() == ErrorCode::kInvalidArgument || s.code() == ErrorCode::kInternal) {
    // The foreign key (no such experiment) or a CHECK.
    auto exists = db_->Prepare("SELECT 1 FROM experiments WHERE id = ?1");
    if (exists.ok()) {
      exists->Bind(1, experiment_id);
      auto row = exists->Step();
      if (row.ok() && !*row) return NotFound("experiment " + std::to_string(experiment_id) + " not found");
    }
  }
  return WithContext(s, "set resources of experiment " + std::to_string(experiment_id));
}

Result<ResourceOverrides> SqliteStore::GetResourceOverrides(int64_t experiment_id) {
  std::lock_guard lock(mu_);
  if (auto cached = overrides_.find(experiment_id); cached != overrides_.end()) return cached->second;
  Result<Stmt> select = db_->Prepare(
      "SELECT e.id, r.priority, r.weight, r.max_slots, r.admin_priority, r.admin_max_slots FROM experiments "
      "e "
      "LEFT JOIN experiment_resources r ON r.experiment_id = e.id WHERE e.id = ?1");
  if (!select.ok()) return select.status();
  select->Bind(1, experiment_id);
  Result<bool> row = select->Step();
  if (!row.ok()) return row.status();
  if (!*row) return NotFound("experiment " + std::to_string(experiment_id) + " not found");
  ResourceOverrides stored{select->OptInt(1), select->OptDouble(2), select->OptInt(3), select->OptInt(4),
                           select->OptInt(5)};
  overrides_.emplace(experiment_id, stored);
  return stored;
}

}  // namespace ring
