// SqliteStore: the tasks table (what holds slots: trials, commands, shells,
// notebooks).
#include "master/store/sqlite_db.h"
#include "master/store/sqlite_store.h"
#include "master/store/store_util.h"

namespace ring {

Result<int64_t> SqliteStore::CreateTask(const TaskRecord& t) {
  if (t.kind == TaskKind::kTrial)
    return InvalidArgument("create task: a trial's task is made with the trial");
  std::lock_guard lock(mu_);
  Result<Stmt> insert = db_->Prepare("INSERT INTO tasks (kind, owner, created_at) VALUES (?1, ?2, ?3)");
  if (!insert.ok()) return insert.status();
  insert->Bind(1, ToString(t.kind)).Bind(2, t.owner).Bind(3, NowRfc3339());
  if (Status s = insert->Run(); !s.ok()) return WithContext(s, "create task");
  return db_->LastInsertRowid();
}

Result<TaskRecord> SqliteStore::GetTask(int64_t id) {
  std::lock_guard lock(mu_);
  Result<Stmt> select = db_->Prepare(
      "SELECT k.id, k.kind, k.owner, k.created_at, COALESCE(k.ended_at, t.ended_at) "
      "FROM tasks k LEFT JOIN trials t ON t.task_id = k.id WHERE k.id = ?1");
  if (!select.ok()) return select.status();
  select->Bind(1, id);
  Result<bool> row = select->Step();
  if (!row.ok()) return row.status();
  if (!*row) return NotFound("task " + std::to_string(id) + " not found");
  TaskRecord t;
  t.id = select->Int(0);
  const std::string kind = select->Text(1);
  const std::optional<TaskKind> parsed = ParseTaskKind(kind);
  if (!parsed) return Internal("task " + std::to_string(t.id) + " has unknown kind '" + kind + "'");
  t.kind = *parsed;
  t.owner = select->Text(2);
  t.created_at = select->Text(3);
  t.ended_at = select->Text(4);
  return t;
}

Status SqliteStore::EndTask(int64_t id) {
  std::lock_guard lock(mu_);
  Result<Stmt> update = db_->Prepare("UPDATE tasks SET ended_at = COALESCE(ended_at, ?2) WHERE id = ?1");
  if (!update.ok()) return update.status();
  update->Bind(1, id).Bind(2, NowRfc3339());
  if (Status s = update->Run(); !s.ok()) return WithContext(s, "end task " + std::to_string(id));
  if (db_->Changes() == 0) return NotFound("task " + std::to_string(id) + " not found");
  return Status::Ok();
}

Status SqliteStore::CheckAllocationTaskLocked(const AllocationRecord& a) {
  Result<Stmt> select =
      db_->Prepare("SELECT (SELECT id FROM trials WHERE task_id = ?1) FROM tasks WHERE id = ?1");
  if (!select.ok()) return select.status();
  select->Bind(1, a.task_id);
  Result<bool> row = select->Step();
  if (!row.ok()) return row.status();
  if (!*row) {
    return InvalidArgument("create allocation " + a.id + ": task " + std::to_string(a.task_id) +
                           " does not exist");
  }
  if (select->OptInt(0) != a.trial_id) {
    return InvalidArgument("create allocation " + a.id + ": trial_id is not the trial of task " +
                           std::to_string(a.task_id));
  }
  return Status::Ok();
}

}  // namespace ring
