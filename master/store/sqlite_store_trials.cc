// SqliteStore: the trials and allocations tables.
#include <utility>

#include "master/store/record_json.h"
#include "master/store/sqlite_db.h"
#include "master/store/sqlite_store.h"
#include "master/store/store_util.h"

namespace ring {
namespace {

constexpr const char* kTrialColumns =
    "id, experiment_id, state, hparams, seed, restarts, total_batches, best_validation, latest_checkpoint, "
    "created_at, ended_at, request_id, task_id, "
    "(SELECT policy FROM log_policy_matches m WHERE m.trial_id = trials.id ORDER BY m.id DESC LIMIT 1)";

Result<TrialRecord> ReadTrial(const Stmt& s) {
  TrialRecord t;
  t.id = s.Int(0);
  t.experiment_id = s.Int(1);
  std::string state = s.Text(2);
  std::optional<RunState> parsed = ParseRunState(state);
  if (!parsed) return Internal("trial " + std::to_string(t.id) + " has unknown state '" + state + "'");
  t.state = *parsed;
  t.hparams_json = s.Text(3);
  t.seed = s.Int(4);
  t.restarts = s.Int(5);
  t.total_batches = s.Int(6);
  t.best_validation = s.OptDouble(7);
  t.latest_checkpoint = s.Text(8);
  t.created_at = s.Text(9);
  t.ended_at = s.Text(10);
  t.request_id = s.OptInt(11);
  t.task_id = s.Int(12);
  t.log_signal = s.Text(13);
  return t;
}

constexpr const char* kAllocationColumns =
    "id, trial_id, state, token_hash, slots, agent_ids, exit_reason, exit_code, created_at, ended_at, "
    "end_cause, "
    "task_id, processes";

Result<AllocationRecord> ReadAllocation(const Stmt& s) {
  AllocationRecord a;
  a.id = s.Text(0);
  a.trial_id = s.OptInt(1);
  std::string state = s.Text(2);
  std::optional<AllocationState> parsed = ParseAllocationState(state);
  if (!parsed) return Internal("allocation " + a.id + " has unknown state '" + state + "'");
  a.state = *parsed;
  a.token_hash = s.Text(3);
  a.slots = s.Int(4);
  auto placements = PlacementsFromJson(s.Text(5));
  if (!placements.ok()) return WithContext(placements.status(), "allocation " + a.id);
  a.placements = std::move(*placements);
  a.exit_reason = s.Text(6);
  if (!s.IsNull(7)) a.exit_code = static_cast<int>(s.Int(7));
  a.created_at = s.Text(8);
  a.ended_at = s.Text(9);
  if (!s.IsNull(10)) {
    const std::string cause = s.Text(10);
    a.end_cause = ParseEndCause(cause);
    if (!a.end_cause) return Internal("allocation " + a.id + " has unknown end cause '" + cause + "'");
  }
  a.task_id = s.Int(11);
  a.processes = static_cast<int>(s.Int(12));
  return a;
}

// Steps `select` to the end, reading each row with `read`.
template <typename T, typename Read>
Result<std::vector<T>> ReadAll(Stmt& select, Read read) {
  std::vector<T> out;
  for (;;) {
    Result<bool> row = select.Step();
    if (!row.ok()) return row.status();
    if (!*row) return out;
    Result<T> item = read(select);
    if (!item.ok()) return item.status();
    out.push_back(std::move(item).value());
  }
}

}  // namespace

Result<int64_t> SqliteStore::CreateTrial(const TrialRecord& t) {
  const WriteNotice changes(experiments_generation_);
  std::lock_guard lock(mu_);
  SqliteTransaction tx(*db_);  // the trial and its task, or neither
  if (!tx.status().ok()) return tx.status();
  Result<int64_t> id = InsertTrialLocked(t);
  if (!id.ok()) return id.status();
  if (Status s = tx.Commit(); !s.ok()) return s;
  return id;
}

Result<int64_t> SqliteStore::InsertTrialLocked(const TrialRecord& t) {
  const std::string now = NowRfc3339();
  // The trial's task, owned by the experiment's owner (no row: no experiment).
  Result<Stmt> task = db_->Prepare(
      "INSERT INTO tasks (kind, owner, created_at) SELECT 'TRIAL', owner, ?2 FROM experiments WHERE id = ?1");
  if (!task.ok()) return task.status();
  task->Bind(1, t.experiment_id).Bind(2, now);
  if (Status s = task->Run(); !s.ok()) {
    return WithContext(s, "create the task of a trial of experiment " + std::to_string(t.experiment_id));
  }
  if (db_->Changes() == 0) {
    return InvalidArgument("create trial: experiment " + std::to_string(t.experiment_id) + " does not exist");
  }
  const int64_t task_id = db_->LastInsertRowid();
  Result<Stmt> insert = db_->Prepare(
      "INSERT INTO trials (experiment_id, state, hparams, seed, restarts, total_batches, best_validation, "
      "latest_checkpoint, created_at, ended_at, request_id, task_id) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)");
  if (!insert.ok()) return insert.status();
  insert->Bind(1, t.experiment_id).Bind(2, ToString(t.state)).Bind(3, t.hparams_json).Bind(4, t.seed);
  insert->Bind(5, t.restarts).Bind(6, t.total_batches).Bind(7, t.best_validation);
  insert->BindTextOrNull(8, t.latest_checkpoint).Bind(9, now);
  insert->BindTextOrNull(10, EndedAt(IsTerminal(t.state), t.ended_at, "", now)).Bind(11, t.request_id);
  insert->Bind(12, task_id);
  if (Status s = insert->Run(); !s.ok()) {
    return WithContext(s, "create trial of experiment " + std::to_string(t.experiment_id));
  }
  return db_->LastInsertRowid();
}

Result<TrialRecord> SqliteStore::GetTrial(int64_t id) {
  std::lock_guard lock(mu_);
  static const std::string sql = std::string("SELECT ") + kTrialColumns + " FROM trials WHERE id = ?1";
  Result<Stmt> select = db_->Prepare(sql.c_str());
  if (!select.ok()) return select.status();
  select->Bind(1, id);
  Result<bool> row = select->Step();
  if (!row.ok()) return row.status();
  if (!*row) return NotFound("trial " + std::to_string(id) + " not found");
  return ReadTrial(*select);
}

Result<std::vector<TrialRecord>> SqliteStore::ListTrials(int64_t experiment_id) {
  std::lock_guard lock(mu_);
  static const std::string sql =
      std::string("SELECT ") + kTrialColumns + " FROM trials WHERE experiment_id = ?1 ORDER BY id";
  Result<Stmt> select = db_->Prepare(sql.c_str());
  if (!select.ok()) return select.status();
  select->Bind(1, experiment_id);
  return ReadAll<TrialRecord>(*select, ReadTrial);
}

Status SqliteStore::UpdateTrial(const TrialRecord& t) {
  const WriteNotice changes(experiments_generation_);
  std::lock_guard lock(mu_);
  Result<Stmt> update = db_->Prepare(
      "UPDATE trials SET state = ?2, restarts = ?3, total_batches = MAX(total_batches, ?4), "
      "best_validation = ?5, latest_checkpoint = ?6, ended_at = COALESCE(?7, CASE WHEN ?8 THEN "
      "COALESCE(ended_at, ?9) END) "
      "WHERE id = ?1");
  if (!update.ok()) return update.status();
  update->Bind(1, t.id).Bind(2, ToString(t.state)).Bind(3, t.restarts).Bind(4, t.total_batches);
  update->Bind(5, t.best_validation).BindTextOrNull(6, t.latest_checkpoint).BindTextOrNull(7, t.ended_at);
  update->Bind(8, int64_t{IsTerminal(t.state)}).Bind(9, NowRfc3339());
  if (Status s = update->Run(); !s.ok()) return WithContext(s, "update trial " + std::to_string(t.id));
  if (db_->Changes() == 0) return NotFound("trial " + std::to_string(t.id) + " not found");
  return Status::Ok();
}

Status SqliteStore::CreateAllocation(const AllocationRecord& a) {
  std::lock_guard lock(mu_);
  if (Status s = CheckAllocationTaskLocked(a); !s.ok()) return s;
  Result<Stmt> insert = db_->Prepare(
      "INSERT INTO allocations (id, trial_id, state, token_hash, slots, agent_ids, exit_reason, exit_code, "
      "created_at, ended_at, end_cause, task_id, processes) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, "
      "?11, "
      "?12, ?13)");
  if (!insert.ok()) return insert.status();
  const std::string now = NowRfc3339();
  insert->Bind(1, a.id).Bind(2, a.trial_id).Bind(3, ToString(a.state)).Bind(4, a.token_hash);
  insert->Bind(5, a.slots).Bind(6, PlacementsJson(a.placements)).BindTextOrNull(7, a.exit_reason);
  if (a.exit_code) {
    insert->Bind(8, int64_t{*a.exit_code});
  } else {
    insert->BindNull(8);
  }
  insert->Bind(9, now).BindTextOrNull(10, EndedAt(IsTerminal(a.state), a.ended_at, "", now));
  insert->BindTextOrNull(11, a.end_cause ? ToString(*a.end_cause) : std::string_view()).Bind(12, a.task_id);
  insert->Bind(13, int64_t{a.processes});
  return WithContext(insert->Run(), "create allocation " + a.id);
}

Result<AllocationRecord> SqliteStore::GetAllocation(const std::string& id) {
  std::lock_guard lock(mu_);
  static const std::string sql =
      std::string("SELECT ") + kAllocationColumns + " FROM allocations WHERE id = ?1";
  Result<Stmt> select = db_->Prepare(sql.c_str());
  if (!select.ok()) return select.status();
  select->Bind(1, id);
  Result<bool> row = select->Step();
  if (!row.ok()) return row.status();
  if (!*row) return NotFound("allocation " + id + " not found");
  return ReadAllocation(*select);
}

Result<std::vector<AllocationRecord>> SqliteStore::ListAllocations(int64_t trial_id) {
  std::lock_guard lock(mu_);
  static const std::string sql =
      std::string("SELECT ") + kAllocationColumns + " FROM allocations WHERE trial_id = ?1 ORDER BY rowid";
  Result<Stmt> select = db_->Prepare(sql.c_str());
  if (!select.ok()) return select.status();
  select->Bind(1, trial_id);
  return ReadAll<AllocationRecord>(*select, ReadAllocation);
}

Result<std::vector<AllocationRecord>> SqliteStore::ListTaskAllocations(int64_t task_id) {
  std::lock_guard lock(mu_);
  static const std::string sql =
      std::string("SELECT ") + kAllocationColumns + " FROM allocations WHERE task_id = ?1 ORDER BY rowid";
  Result<Stmt> select = db_->Prepare(sql.c_str());
  if (!select.ok()) return select.status();
  select->Bind(1, task_id);
  return ReadAll<AllocationRecord>(*select, ReadAllocation);
}

Result<std::vector<AllocationRecord>> SqliteStore::ListLiveAllocations() {
  std::lock_guard lock(mu_);
  static const std::string sql = std::string("SELECT ") + kAllocationColumns +
                                 " FROM allocations WHERE state <> 'TERMINATED' ORDER BY rowid";
  Result<Stmt> select = db_->Prepare(sql.c_str());
  if (!select.ok()) return select.status();
  return ReadAll<AllocationRecord>(*select, ReadAllocation);
}

Status SqliteStore::UpdateAllocation(const AllocationRecord& a) {
  std::lock_guard lock(mu_);
  Result<Stmt> update = db_->Prepare(
      "UPDATE allocations SET state = ?2, token_hash = ?3, agent_ids = ?4, exit_reason = ?5, exit_code = ?6, "
      "ended_at = COALESCE(?7, CASE WHEN ?8 THEN COALESCE(ended_at, ?9) END), end_cause = ?10, processes = "
      "?11 "
      "WHERE id = ?1");
  if (!update.ok()) return update.status();
  update->Bind(1, a.id)
      .Bind(2, ToString(a.state))
      .Bind(3, a.token_hash)
      .Bind(4, PlacementsJson(a.placements));
  update->BindTextOrNull(5, a.exit_reason);
  if (a.exit_code) {
    update->Bind(6, int64_t{*a.exit_code});
  } else {
    update->BindNull(6);
  }
  update->BindTextOrNull(7, a.ended_at).Bind(8, int64_t{IsTerminal(a.state)}).Bind(9, NowRfc3339());
  update->BindTextOrNull(10, a.end_cause ? ToString(*a.end_cause) : std::string_view());
  update->Bind(11, int64_t{a.processes});
  if (Status s = update->Run(); !s.ok()) return WithContext(s, "update allocation " + a.id);
  if (db_->Changes() == 0) return NotFound("allocation " + a.id + " not found");
  return Status::Ok();
}

}  // namespace ring
