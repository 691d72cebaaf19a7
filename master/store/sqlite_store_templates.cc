// SqliteStore: config templates.
#include "master/store/sqlite_db.h"
#include "master/store/sqlite_store.h"
#include "master/store/store_util.h"

namespace ring {
namespace {

constexpr const char* kTemplateColumns =
    "SELECT name, config_yaml, owner, created_at, updated_at FROM templates ";

TemplateRecord ReadTemplate(const Stmt& s) {
  return {s.Text(0), s.Text(1), s.Text(2), s.Text(3), s.Text(4)};
}

}  // namespace

Status SqliteStore::SetTemplate(const TemplateRecord& t) {
  std::lock_guard lock(mu_);
  Result<Stmt> upsert = db_->Prepare(
      "INSERT INTO templates (name, config_yaml, owner, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?4) "
      "ON CONFLICT (name) DO UPDATE SET config_yaml = excluded.config_yaml, updated_at = "
      "excluded.updated_at");
  if (!upsert.ok()) return upsert.status();
  upsert->Bind(1, t.name).Bind(2, t.config_yaml).Bind(3, t.owner).Bind(4, NowRfc3339());
  if (Status s = upsert->Run(); !s.ok()) return WithContext(s, "set template " + t.name);
  return Status::Ok();
}

Result<TemplateRecord> SqliteStore::GetTemplate(const std::string& name) {
  std::lock_guard lock(mu_);
  Result<Stmt> select = db_->Prepare((std::string(kTemplateColumns) + "WHERE name = ?1").c_str());
  if (!select.ok()) return select.status();
  select->Bind(1, name);
  Result<bool> row = select->Step();
  if (!row.ok()) return row.status();
  if (!*row) return NotFound("template \"" + name + "\" not found");
  TemplateRecord t = ReadTemplate(*select);
  (void)select->Step();
  return t;
}

Result<std::vector<TemplateRecord>> SqliteStore::ListTemplates() {
  std::lock_guard lock(mu_);
  Result<Stmt> select = db_->Prepare((std::string(kTemplateColumns) + "ORDER BY name").c_str());
  if (!select.ok()) return select.status();
  std::vector<TemplateRecord> out;
  for (;;) {
    Result<bool> row = select->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    out.push_back(ReadTemplate(*select));
  }
  return out;
}

Status SqliteStore::DeleteTemplate(const std::string& name) {
  std::lock_guard lock(mu_);
  Result<Stmt> del = db_->Prepare("DELETE FROM templates WHERE name = ?1");
  if (!del.ok()) return del.status();
  del->Bind(1, name);
  if (Status s = del->Run(); !s.ok()) return WithContext(s, "delete template " + name);
  if (db_->Changes() == 0) return NotFound("template \"" + name + "\" not found");
  return Status::Ok();
}

}  // namespace ring
