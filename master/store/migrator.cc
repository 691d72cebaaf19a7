#include "master/store/migrator.h"

#include <string>

#include "master/store/store.h"

namespace ring {
namespace {

constexpr const char* kCreateMigrationsTable =
    "CREATE TABLE IF NOT EXISTS schema_migrations ("
    " version INTEGER PRIMARY KEY,"
    " name TEXT NOT NULL,"
    " applied_at TEXT NOT NULL)";

Status CheckOrder(const std::vector<Migration>& migrations) {
  int last = 0;
  for (const Migration& m : migrations) {
    if (m.version <= last) {
      return Internal("migration " + std::to_string(m.version) + " (" + m.name +
                      ") is out of order: versions must be positive and strictly increasing");
    }
    last = m.version;
  }
  return Status::Ok();
}

Status RecordMigration(SqliteDb& db, const Migration& m) {
  Result<Stmt> insert =
      db.Prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?1, ?2, ?3)");
  if (!insert.ok()) return insert.status();
  insert->Bind(1, static_cast<int64_t>(m.version)).Bind(2, m.name).Bind(3, NowRfc3339());
  return insert->Run();
}

// Applies the first migration newer than the recorded version, inside one
// IMMEDIATE transaction so a second process migrating the same file waits and
// then sees the new version. Returns the version afterwards.
Result<int> ApplyNext(SqliteDb& db, const std::vector<Migration>& migrations) {
  SqliteTransaction tx(db);
  if (!tx.status().ok()) return tx.status();
  Result<int> current = SchemaVersion(db);
  if (!current.ok()) return current.status();
  int known = migrations.empty() ? 0 : migrations.back().version;
  if (*current > known) {
    return Conflict("database schema version " + std::to_string(*current) +
                    " is newer than this ringmaster supports (" + std::to_string(known) +
                    "); run a newer ringmaster or point --db at another file");
  }
  for (const Migration& m : migrations) {
    if (m.version <= *current) continue;
    std::string what = "migration " + std::to_string(m.version) + "_" + m.name;
    if (Status s = db.Exec(m.sql, what); !s.ok()) return s;
    if (Status s = RecordMigration(db, m); !s.ok()) return s;
    if (Status s = tx.Commit(); !s.ok()) return s;
    return m.version;
  }
  if (Status s = tx.Commit(); !s.ok()) return s;
  return *current;
}

}  // namespace

Result<int> SchemaVersion(SqliteDb& db) {
  Result<Stmt> select = db.Prepare("SELECT COALESCE(MAX(version), 0) FROM schema_migrations");
  if (!select.ok()) return select.status();
  Result<bool> row = select->Step();
  if (!row.ok()) return row.status();
  return static_cast<int>(select->Int(0));
}

Result<int> ApplyMigrations(SqliteDb& db, const std::vector<Migration>& migrations) {
  if (Status s = CheckOrder(migrations); !s.ok()) return s;
  if (Status s = db.Exec(kCreateMigrationsTable, "create schema_migrations"); !s.ok()) return s;
  int version = -1;
  for (;;) {
    Result<int> next = ApplyNext(db, migrations);
    if (!next.ok()) return next.status();
    if (*next == version) return version;
    version = *next;
  }
}

}  // namespace ring
