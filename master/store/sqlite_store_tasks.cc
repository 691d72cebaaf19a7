// SqliteStore: the tasks table (what holds slots: trials, commands, shells,
// notebooks).
#include "master/store/record_json.h"
#include "master/store/sqlite_db.h"
#include "master/store/sqlite_store.h"
#include "master/store/store_util.h"

namespace ring {

Result<int64_t> SqliteStore::CreateTask(const TaskRecord& t, const std::string& context_tar_gz) {
  if (t.kind == TaskKind::kTrial)
    return InvalidArgument("create task: a trial's task is made with the trial");
  std::lock_guard lock(mu_);
  Result<Stmt> insert =
      db_->Prepare("INSERT INTO tasks (kind, owner, created_at, spec, context) VALUES (?1, ?2, ?3, ?4, ?5)");
  if (!insert.ok()) return insert.status();
  insert->Bind(1, ToString(t.kind)).Bind(2, t.owner).Bind(3, NowRfc3339()).Bind(4, TaskSpecJson(t.spec));
  if (!context_tar_gz.empty()) insert->BindBlob(5, context_tar_gz);
  if (Status s = insert->Run(); !s.ok()) return WithContext(s, "create task");
  return db_->LastInsertRowid();
}

Result<TaskRecord> SqliteStore::GetTask(int64_t id) {
  std::lock_guard lock(mu_);
  Result<Stmt> select = db_->Prepare(
      "SELECT k.id, k.kind, k.owner, k.created_at, COALESCE(k.ended_at, t.ended_at), k.spec "
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
  if (t.kind != TaskKind::kTrial) {
    auto spec = TaskSpecFromJson(select->Text(5));
    if (!spec.ok()) return spec.status();
    t.spec = std::move(spec).value();
  }
  return t;
}

Result<std::vector<TaskRecord>> SqliteStore::ListTasks(TaskKind kind, int64_t limit) {
  if (Status s = CheckPage(limit, 0); !s.ok()) return s;
  std::lock_guard lock(mu_);
  Result<Stmt> select = db_->Prepare(
      "SELECT id, owner, created_at, ended_at, spec FROM tasks WHERE kind = ?1 ORDER BY id DESC LIMIT ?2");
  if (!select.ok()) return select.status();
  select->Bind(1, ToString(kind)).Bind(2, limit);
  std::vector<TaskRecord> out;
  for (;;) {
    Result<bool> row = select->Step();
    if (!row.ok()) return row.status();
    if (!*row) return out;
    TaskRecord t;
    t.id = select->Int(0);
    t.kind = kind;
    t.owner = select->Text(1);
    t.created_at = select->Text(2);
    t.ended_at = select->Text(3);
    auto spec = TaskSpecFromJson(select->Text(4));
    if (!spec.ok()) return spec.status();
    t.spec = std::move(spec).value();
    out.push_back(std::move(t));
  }
}

Result<std::string> SqliteStore::GetTaskContext(int64_t id) {
  std::lock_guard lock(mu_);
  Result<Stmt> select = db_->Prepare("SELECT context FROM tasks WHERE id = ?1");
  if (!select.ok()) return select.status();
  select->Bind(1, id);
  Result<bool> row = select->Step();
  if (!row.ok()) return row.status();
  if (!*row) return NotFound("task " + std::to_string(id) + " not found");
  return select->Blob(0);
}

Status SqliteStore::AddTaskLogs(const std::vector<LogRecord>& lines) {
  return InsertLogs(LogOwner::kTask, lines);
}

Result<std::vector<LogRecord>> SqliteStore::GetTaskLogs(int64_t task_id, int rank, int64_t after_id,
                                                        int64_t limit) {
  return SelectLogs(LogOwner::kTask, task_id, rank, after_id, limit);
}

Result<int64_t> SqliteStore::DeleteTaskLogs(int64_t task_id) {
  std::lock_guard lock(mu_);
  Result<Stmt> del = db_->Prepare("DELETE FROM task_logs WHERE task_id = ?1");
  if (!del.ok()) return del.status();
  del->Bind(1, task_id);
  if (Status s = del->Run(); !s.ok()) return WithContext(s, "delete logs of task " + std::to_string(task_id));
  return db_->Changes();
}

Result<std::vector<int64_t>> SqliteStore::ListEndedTasksWithLogs(const std::string& before) {
  std::lock_guard lock(mu_);
  Result<Stmt> select = db_->Prepare(
      "SELECT id FROM tasks k WHERE kind <> 'TRIAL' AND ended_at IS NOT NULL AND ended_at < ?1 "
      "AND EXISTS (SELECT 1 FROM task_logs l WHERE l.task_id = k.id) ORDER BY id");
  if (!select.ok()) return select.status();
  select->Bind(1, before);
  std::vector<int64_t> out;
  for (;;) {
    Result<bool> row = select->Step();
    if (!row.ok()) return row.status();
    if (!*row) return out;
    out.push_back(select->Int(0));
  }
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
