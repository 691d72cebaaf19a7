// SqliteStore: workspaces, their members and bound pools (migration 0024).
#include "master/store/sqlite_db.h"
#include "master/store/sqlite_store.h"

namespace ring {
namespace {

constexpr const char* kWorkspaceColumns =
    "SELECT w.id, w.name, w.description, w.created_by, w.archived, w.created_at, "
    "(SELECT COUNT(*) FROM projects p WHERE p.workspace_id = w.id) FROM workspaces w ";

Status NoWorkspace(int64_t id) {
  return NotFound("workspace " + std::to_string(id) + " not found");
}

WorkspaceRecord ReadWorkspace(const Stmt& s) {
  WorkspaceRecord w;
  w.id = s.Int(0);
  w.name = s.Text(1);
  w.description = s.Text(2);
  w.created_by = s.Text(3);
  w.archived = s.Int(4) != 0;
  w.created_at = s.Text(5);
  w.num_projects = s.Int(6);
  return w;
}

// mu_ held: fills the members and pools of `w`.
Status ReadMembersAndPools(SqliteDb& db, WorkspaceRecord& w) {
  Result<Stmt> members =
      db.Prepare("SELECT username, role FROM workspace_members WHERE workspace_id = ?1 ORDER BY username");
  if (!members.ok()) return members.status();
  members->Bind(1, w.id);
  for (;;) {
    Result<bool> row = members->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    std::optional<WorkspaceRole> role = ParseWorkspaceRole(members->Text(1));
    if (!role)
      return Internal("workspace " + std::to_string(w.id) + " has a member with role " + members->Text(1));
    w.members.push_back({members->Text(0), *role});
  }
  Result<Stmt> pools =
      db.Prepare("SELECT pool, is_default FROM workspace_pools WHERE workspace_id = ?1 ORDER BY pool");
  if (!pools.ok()) return pools.status();
  pools->Bind(1, w.id);
  for (;;) {
    Result<bool> row = pools->Step();
    if (!row.ok()) return row.status();
    if (!*row) return Status::Ok();
    w.pools.push_back({pools->Text(0), pools->Int(1) != 0});
  }
}

// mu_ held: workspaces matching `where` (with its parameter bound by `bind`).
template <typename Bind>
Result<std::vector<WorkspaceRecord>> SelectWorkspaces(SqliteDb& db, const std::string& where, Bind bind) {
  Result<Stmt> select = db.Prepare((std::string(kWorkspaceColumns) + where + " ORDER BY w.id").c_str());
  if (!select.ok()) return select.status();
  bind(*select);
  std::vector<WorkspaceRecord> out;
  for (;;) {
    Result<bool> row = select->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    out.push_back(ReadWorkspace(*select));
  }
  for (auto& w : out)
    if (Status s = ReadMembersAndPools(db, w); !s.ok()) return s;
  return out;
}

Result<WorkspaceRecord> SelectWorkspace(SqliteDb& db, int64_t id) {
  auto found = SelectWorkspaces(db, "WHERE w.id = ?1", [id](Stmt& s) { s.Bind(1, id); });
  if (!found.ok()) return found.status();
  if (found->empty()) return NoWorkspace(id);
  return found->front();
}

Status Exists(SqliteDb& db, int64_t id) {
  Result<Stmt> select = db.Prepare("SELECT 1 FROM workspaces WHERE id = ?1");
  if (!select.ok()) return select.status();
  select->Bind(1, id);
  Result<bool> row = select->Step();
  if (!row.ok()) return row.status();
  return *row ? Status::Ok() : NoWorkspace(id);
}

Status PutMember(SqliteDb& db, int64_t id, const WorkspaceMember& m) {
  Result<Stmt> put = db.Prepare(
      "INSERT INTO workspace_members (workspace_id, username, role) VALUES (?1, ?2, ?3) "
      "ON CONFLICT (workspace_id, username) DO UPDATE SET role = excluded.role");
  if (!put.ok()) return put.status();
  put->Bind(1, id).Bind(2, m.username).Bind(3, ToString(m.role));
  return put->Run();
}

Status PutPool(SqliteDb& db, int64_t id, const WorkspacePool& p) {
  if (p.is_default) {
    Result<Stmt> clear = db.Prepare("UPDATE workspace_pools SET is_default = 0 WHERE workspace_id = ?1");
    if (!clear.ok()) return clear.status();
    clear->Bind(1, id);
    if (Status s = clear->Run(); !s.ok()) return s;
  }
  Result<Stmt> put = db.Prepare(
      "INSERT INTO workspace_pools (workspace_id, pool, is_default) VALUES (?1, ?2, ?3) "
      "ON CONFLICT (workspace_id, pool) DO UPDATE SET is_default = excluded.is_default");
  if (!put.ok()) return put.status();
  put->Bind(1, id).Bind(2, p.pool).Bind(3, int64_t{p.is_default});
  return put->Run();
}

}  // namespace

Result<WorkspaceRecord> SqliteStore::CreateWorkspace(const WorkspaceRecord& w) {
  const WriteNotice changes(experiments_generation_);  // lists show names and membership
  std::lock_guard lock(mu_);
  if (w.name.empty()) return InvalidArgument("a workspace needs a name");
  SqliteTransaction tx(*db_);
  if (!tx.status().ok()) return tx.status();
  Result<Stmt> insert = db_->Prepare(
      "INSERT INTO workspaces (name, description, created_by, archived, created_at) VALUES (?1, ?2, ?3, ?4, "
      "?5)");
  if (!insert.ok()) return insert.status();
  insert->Bind(1, w.name).Bind(2, w.description).Bind(3, w.created_by).Bind(4, int64_t{w.archived});
  insert->Bind(5, NowRfc3339());
  if (Status s = insert->Run(); !s.ok()) {
    if (s.code() == ErrorCode::kConflict) return Conflict("workspace \"" + w.name + "\" exists already");
    return WithContext(s, "create workspace " + w.name);
  }
  const int64_t id = db_->LastInsertRowid();
  for (const auto& m : w.members)
    if (Status s = PutMember(*db_, id, m); !s.ok()) return s;
  for (const auto& p : w.pools)
    if (Status s = PutPool(*db_, id, p); !s.ok()) return s;
  if (Status s = tx.Commit(); !s.ok()) return s;
  return SelectWorkspace(*db_, id);
}

Result<WorkspaceRecord> SqliteStore::GetWorkspace(int64_t id) {
  std::lock_guard lock(mu_);
  return SelectWorkspace(*db_, id);
}

Result<std::vector<WorkspaceRecord>> SqliteStore::ListWorkspaces() {
  std::lock_guard lock(mu_);
  return SelectWorkspaces(*db_, "", [](Stmt&) {});
}

Status SqliteStore::UpdateWorkspace(int64_t id, const WorkspaceUpdate& u) {
  const WriteNotice changes(experiments_generation_);  // lists show names and membership
  std::lock_guard lock(mu_);
  if (u.name && u.name->empty()) return InvalidArgument("a workspace needs a name");
  Result<Stmt> update = db_->Prepare(
      "UPDATE workspaces SET name = COALESCE(?2, name), description = COALESCE(?3, description), "
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
      return Conflict("workspace \"" + u.name.value_or("") + "\" exists already");
    return s;
  }
  return db_->Changes() == 0 ? NoWorkspace(id) : Status::Ok();
}

Status SqliteStore::DeleteWorkspace(int64_t id) {
  const WriteNotice changes(experiments_generation_);  // lists show names and membership
  std::lock_guard lock(mu_);
  SqliteTransaction tx(*db_);
  if (!tx.status().ok()) return tx.status();
  if (Status s = Exists(*db_, id); !s.ok()) return s;
  if (id == kDefaultWorkspaceId) return Conflict("the default workspace (Uncategorized) stays");
  Result<Stmt> busy = db_->Prepare(
      "SELECT p.name FROM projects p JOIN experiments e ON e.project_id = p.id WHERE p.workspace_id = ?1 "
      "LIMIT 1");
  if (!busy.ok()) return busy.status();
  busy->Bind(1, id);
  Result<bool> row = busy->Step();
  if (!row.ok()) return row.status();
  if (*row)
    return Conflict("workspace " + std::to_string(id) + "'s project \"" + busy->Text(0) +
                    "\" holds experiments; move or delete them first");
  for (const char* sql :
       {"DELETE FROM webhook_deliveries WHERE webhook_id IN (SELECT id FROM webhooks WHERE workspace_id = "
        "?1)",
        "DELETE FROM webhooks WHERE workspace_id = ?1", "DELETE FROM projects WHERE workspace_id = ?1",
        "DELETE FROM workspace_members WHERE workspace_id = ?1",
        "DELETE FROM workspace_pools WHERE workspace_id = ?1", "DELETE FROM workspaces WHERE id = ?1"}) {
    Result<Stmt> del = db_->Prepare(sql);
    if (!del.ok()) return del.status();
    del->Bind(1, id);
    if (Status s = del->Run(); !s.ok()) return s;
  }
  return tx.Commit();
}

Status SqliteStore::SetWorkspaceMember(int64_t id, const WorkspaceMember& m) {
  const WriteNotice changes(experiments_generation_);  // lists show names and membership
  std::lock_guard lock(mu_);
  if (Status s = Exists(*db_, id); !s.ok()) return s;
  return PutMember(*db_, id, m);
}

Status SqliteStore::RemoveWorkspaceMember(int64_t id, const std::string& username) {
  const WriteNotice changes(experiments_generation_);  // lists show names and membership
  std::lock_guard lock(mu_);
  if (Status s = Exists(*db_, id); !s.ok()) return s;
  Result<Stmt> del = db_->Prepare("DELETE FROM workspace_members WHERE workspace_id = ?1 AND username = ?2");
  if (!del.ok()) return del.status();
  del->Bind(1, id).Bind(2, username);
  if (Status s = del->Run(); !s.ok()) return s;
  if (db_->Changes() == 0) return NotFound(username + " is not a member of workspace " + std::to_string(id));
  return Status::Ok();
}

Status SqliteStore::BindWorkspacePool(int64_t id, const WorkspacePool& p) {
  const WriteNotice changes(experiments_generation_);  // lists show names and membership
  std::lock_guard lock(mu_);
  SqliteTransaction tx(*db_);
  if (!tx.status().ok()) return tx.status();
  if (Status s = Exists(*db_, id); !s.ok()) return s;
  if (Status s = PutPool(*db_, id, p); !s.ok()) return s;
  return tx.Commit();
}

Status SqliteStore::UnbindWorkspacePool(int64_t id, const std::string& pool) {
  const WriteNotice changes(experiments_generation_);  // lists show names and membership
  std::lock_guard lock(mu_);
  if (Status s = Exists(*db_, id); !s.ok()) return s;
  Result<Stmt> del = db_->Prepare("DELETE FROM workspace_pools WHERE workspace_id = ?1 AND pool = ?2");
  if (!del.ok()) return del.status();
  del->Bind(1, id).Bind(2, pool);
  if (Status s = del->Run(); !s.ok()) return s;
  if (db_->Changes() == 0)
    return NotFound("workspace " + std::to_string(id) + " is not bound to pool \"" + pool + "\"");
  return Status::Ok();
}

}  // namespace ring
