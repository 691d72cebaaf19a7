#pragma once
// A thin RAII layer over one SQLite connection: cached prepared statements,
// typed binding, and result codes mapped to Status. Not thread-safe: the owner
// serialises every call (SqliteStore holds it under its mutex).
#include <sqlite3.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/status.h"

namespace ring {

// Maps a SQLite result code to a Status: unique/primary-key violations are
// kConflict, other constraint violations kInvalidArgument, busy/locked
// kUnavailable, anything else kInternal. `what` names the operation.
Status SqliteStatus(sqlite3* db, int rc, std::string_view what);

// `s` with "what: " in front of its message (ok stays ok).
Status WithContext(const Status& s, const std::string& what);

// Called with the duration of every statement run to completion without
// reading rows (Stmt::Run: inserts, updates, deletes, COMMIT), for the
// master's metrics. Set once at start, before the store is used.
void SetSqliteWriteObserver(std::function<void(double seconds)> observer);

// One use of a cached prepared statement. Binding indexes start at 1, columns
// at 0. Destruction resets the statement and clears its bindings so the cache
// can hand it out again.
class Stmt {
 public:
  Stmt(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  Stmt(Stmt&& other) noexcept;
  Stmt& operator=(Stmt&&) = delete;
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  ~Stmt();

  Stmt& Bind(int index, int64_t value);
  Stmt& Bind(int index, double value);
  Stmt& Bind(int index, std::string_view text);
  Stmt& Bind(int index, const char* text) { return Bind(index, std::string_view(text)); }
  Stmt& BindBlob(int index, std::string_view bytes);
  Stmt& BindNull(int index);
  Stmt& Bind(int index, const std::optional<double>& value);
  Stmt& Bind(int index, const std::optional<int64_t>& value);
  // Binds NULL for an empty string (the schema's "no value").
  Stmt& BindTextOrNull(int index, std::string_view text);

  // Advances one row: true when a row is ready, false when done.
  Result<bool> Step();
  // Steps to completion; for statements that return no rows.
  Status Run();

  bool IsNull(int column) const;
  int64_t Int(int column) const;
  double Double(int column) const;
  std::string Text(int column) const;  // NULL reads as ""
  std::string Blob(int column) const;
  std::optional<double> OptDouble(int column) const;
  std::optional<int64_t> OptInt(int column) const;

 private:
  void NoteBind(int rc, int index);

  sqlite3* db_;
  sqlite3_stmt* stmt_;
  Status bind_status_;
};

// Owns the connection and the statement cache.
class SqliteDb {
 public:
  static Result<std::unique_ptr<SqliteDb>> Open(const std::string& path);
  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  // Runs a script of statements without values (migrations, pragmas).
  Status Exec(const std::string& sql, std::string_view what);
  // A statement from the cache, prepared on first use. `sql` is a constant.
  Result<Stmt> Prepare(const char* sql);

  int64_t LastInsertRowid() const;
  int64_t Changes() const;
  bool InTransaction() const;
  sqlite3* raw() const { return db_; }

 private:
  explicit SqliteDb(sqlite3* db) : db_(db) {}

  struct StmtDeleter {
    void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
  };
  sqlite3* db_;
  std::unordered_map<std::string, std::unique_ptr<sqlite3_stmt, StmtDeleter>> cache_;
};

// BEGIN IMMEDIATE on construction (check status()); rolls back on destruction
// unless Commit() succeeded. Uses cached statements.
class SqliteTransaction {
 public:
  explicit SqliteTransaction(SqliteDb& db);
  ~SqliteTransaction();
  SqliteTransaction(const SqliteTransaction&) = delete;
  SqliteTransaction& operator=(const SqliteTransaction&) = delete;

  const Status& status() const { return begin_status_; }
  Status Commit();

 private:
  SqliteDb& db_;
  Status begin_status_;
  bool open_ = false;
};

}  // namespace ring
