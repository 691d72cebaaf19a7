// SqliteStore: projects and moving experiments between them (migration 0024).
#include "master/store/sqlite_db.h"
#include "master/store/sqlite_store.h"

namespace ring {
namespace {

constexpr const char* kProjectColumns =
    "SELECT p.id, p.workspace_id, p.name, p.description, p.created_by, p.archived, p.created_at, "
    "(SELECT COUNT(*) FROM experiments e WHERE e.project_id = p.id) FROM projects p ";

Status NoProject(int64_t id) {
  return NotFound("project " + std::to_string(id) + " not found");
}

ProjectRecord ReadProject(const Stmt& s) {
  ProjectRecord p;
  p.id = s.Int(0);
  p.workspace_id = s.Int(1);
  p.name = s.Text(2);
  p.description = s.Text(3);
  p.created_by = s.Text(4);
  p.archived = s.Int(5) != 0;
  p.created_at = s.Text(6);
  p.num_experiments = s.Int(7);
  return p;
}

Result<ProjectRecord> SelectProject(SqliteDb& db, int64_t id) {
  Result<Stmt> select = db.Prepare((std::string(kProjectColumns) + "WHERE p.id = ?1").c_str());
  if (!select.ok()) return select.status();
  select->Bind(1, id);
  Result<bool> row = select->Step();
  if (!row.ok()) return row.status();
  if (!*row) return NoProject(id);
  return ReadProject(*select);
}

}  // namespace

Result<ProjectRecord> SqliteStore::CreateProject(const ProjectRecord& p) {
  const WriteNotice changes(experiments_generation_);  // lists show names and membership
  std::lock_guard lock(mu_);
  if (p.name.empty()) return InvalidArgument("a project needs a name");
  Result<Stmt> insert = db_->Prepare(
      "INSERT INTO projects (workspace_id, name, description, created_by, archived, created_at) "
      "SELECT id, ?2, ?3, ?4, ?5, ?6 FROM workspaces WHERE id = ?1");
  if (!insert.ok()) return insert.status();
  insert->Bind(1, p.workspace_id).Bind(2, p.name).Bind(3, p.description).Bind(4, p.created_by);
  insert->Bind(5, int64_t{p.archived}).Bind(6, NowRfc3339());
  if (Status s = insert->Run(); !s.ok()) {
    if (s.code() == ErrorCode::kConflict)
      return Conflict("workspace " + std::to_string(p.workspace_id) + " has a project \"" + p.name +
                      "\" already");
    return WithContext(s, "create project " + p.name);
  }
  if (db_->Changes() == 0) return NotFound("workspace " + std::to_string(p.workspace_id) + " not found");
  return SelectProject(*db_, db_->LastInsertRowid());
}

Result<ProjectRecord> SqliteStore::GetProject(int64_t id) {
  std::lock_guard lock(mu_);
  return SelectProject(*db_, id);
}

Result<std::vector<ProjectRecord>> SqliteStore::ListProjects() {
  std::lock_guard lock(mu_);
  Result<Stmt> select = db_->Prepare((std::string(kProjectColumns) + "ORDER BY p.id").c_str());
  if (!select.ok()) return select.status();
  std::vector<ProjectRecord> out;
  for (;;) {
    Result<bool> row = select->Step();
    if (!row.ok()) return row.status();
    if (!*row) return out;
    out.push_back(ReadProject(*select));
  }
}

Status SqliteStore::UpdateProject(int64_t id, const ProjectUpdate& u) {
  const WriteNotice changes(experiments_generation_);  // lists show names and membership
  std::lock_guard lock(mu_);
  if (u.name && u.name->empty()) return InvalidArgument("a project needs a name");
  Result<Stmt> update = db_->Prepare(
      "UPDATE projects SET name = COALESCE(?2, name), description = COALESCE(?3, description), "
      "archived = COALESCE(?4, archived) WHERE id = ?1");
  if (!update.ok()) return update.status();
  update->Bind(1, id);
  if (u.name)
    update->Bind(2, *u.name);
  else
    update->BindNull(2);
  if (u.description)
    update->Bind(3, *u.description);
  else
    update->BindNull(3);
  if (u.archived)
    update->Bind(4, int64_t{*u.archived});
  else
    update->BindNull(4);
  if (Status s = update->Run(); !s.ok()) {
    if (s.code() == ErrorCode::kConflict)
      return Conflict("the workspace has a project \"" + u.name.value_or("") + "\" already");
    return s;
  }
  return db_->Changes() == 0 ? NoProject(id) : Status::Ok();
}

Status SqliteStore::DeleteProject(int64_t id) {
  const WriteNotice changes(experiments_generation_);  // lists show names and membership
  std::lock_guard lock(mu_);
  SqliteTransaction tx(*db_);
  if (!tx.status().ok()) return tx.status();
  auto p = SelectProject(*db_, id);
  if (!p.ok()) return p.status();
  if (id == kDefaultProjectId) return Conflict("the default project (Uncategorized) stays");
  if (p->num_experiments > 0)
    return Conflict("project " + std::to_string(id) + " holds " + std::to_string(p->num_experiments) +
                    " experiments; move or delete them first");
  Result<Stmt> del = db_->Prepare("DELETE FROM projects WHERE id = ?1");
  if (!del.ok()) return del.status();
  del->Bind(1, id);
  if (Status s = del->Run(); !s.ok()) return s;
  return tx.Commit();
}

Status SqliteStore::MoveExperiment(int64_t experiment_id, int64_t project_id) {
  const WriteNotice changes(experiments_generation_);
  std::lock_guard lock(mu_);
  SqliteTransaction tx(*db_);
  if (!tx.status().ok()) return tx.status();
  if (auto p = SelectProject(*db_, project_id); !p.ok()) return p.status();
  Result<Stmt> update = db_->Prepare("UPDATE experiments SET project_id = ?2 WHERE id = ?1");
  if (!update.ok()) return update.status();
  update->Bind(1, experiment_id).Bind(2, project_id);
  if (Status s = update->Run(); !s.ok()) return s;
  if (db_->Changes() == 0) return NotFound("experiment " + std::to_string(experiment_id) + " not found");
  return tx.Commit();
}

}  // namespace ring
