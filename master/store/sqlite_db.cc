#include "master/store/sqlite_db.h"

#include "common/thread_role.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <utility>

namespace ring {

Status SqliteStatus(sqlite3* db, int rc, std::string_view what) {
  std::string message(what);
  message += ": ";
  message += db != nullptr && sqlite3_extended_errcode(db) == rc ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  switch (rc) {
    case SQLITE_CONSTRAINT_PRIMARYKEY:
    case SQLITE_CONSTRAINT_UNIQUE:
      return Conflict(std::move(message));
    default:
      break;
  }
  switch (rc & 0xff) {
    case SQLITE_CONSTRAINT:
    case SQLITE_MISMATCH:
    case SQLITE_TOOBIG:
      return InvalidArgument(std::move(message));
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Unavailable(std::move(message));
    default:
      return Internal(std::move(message));
  }
}

Status WithContext(const Status& s, const std::string& what) {
  return s.ok() ? s : Status(s.code(), what + ": " + s.message());
}

Stmt::Stmt(Stmt&& other) noexcept
    : db_(other.db_),
      stmt_(std::exchange(other.stmt_, nullptr)),
      bind_status_(std::move(other.bind_status_)) {}

Stmt::~Stmt() {
  if (stmt_ == nullptr) return;
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

void Stmt::NoteBind(int rc, int index) {
  if (rc != SQLITE_OK && bind_status_.ok())
    bind_status_ = SqliteStatus(db_, rc, "bind parameter " + std::to_string(index));
}

Stmt& Stmt::Bind(int index, int64_t value) {
  NoteBind(sqlite3_bind_int64(stmt_, index, value), index);
  return *this;
}

Stmt& Stmt::Bind(int index, double value) {
  NoteBind(sqlite3_bind_double(stmt_, index, value), index);
  return *this;
}

Stmt& Stmt::Bind(int index, std::string_view text) {
  // SQLITE_TRANSIENT: SQLite copies, so temporaries are safe to pass.
  NoteBind(sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8), index);
  return *this;
}

Stmt& Stmt::BindBlob(int index, std::string_view bytes) {
  // A zero-length blob still binds as a blob, not NULL (data must be non-null).
  NoteBind(
      sqlite3_bind_blob64(stmt_, index, bytes.empty() ? "" : bytes.data(), bytes.size(), SQLITE_TRANSIENT),
      index);
  return *this;
}

Stmt& Stmt::BindNull(int index) {
  NoteBind(sqlite3_bind_null(stmt_, index), index);
  return *this;
}

Stmt& Stmt::Bind(int index, const std::optional<double>& value) {
  return value ? Bind(index, *value) : BindNull(index);
}

Stmt& Stmt::Bind(int index, const std::optional<int64_t>& value) {
  return value ? Bind(index, *value) : BindNull(index);
}

Stmt& Stmt::BindTextOrNull(int index, std::string_view text) {
  return text.empty() ? BindNull(index) : Bind(index, text);
}

Result<bool> Stmt::Step() {
  if (!bind_status_.ok()) return bind_status_;
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return SqliteStatus(db_, rc, "sqlite3_step");
}

namespace {
std::function<void(double)>& WriteObserver() {
  static std::function<void(double)> observer;
  return observer;
}
}  // namespace

void SetSqliteWriteObserver(std::function<void(double seconds)> observer) {
  WriteObserver() = std::move(observer);
}

Status Stmt::Run() {
  CheckOffIoThread("an SQLite write");
  const auto start = std::chrono::steady_clock::now();
  Status status;
  for (;;) {
    Result<bool> row = Step();
    if (!row.ok()) {
      status = row.status();
      break;
    }
    if (!*row) break;
  }
  if (const auto& observe = WriteObserver())
    observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return status;
}

bool Stmt::IsNull(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}
int64_t Stmt::Int(int column) const {
  return sqlite3_column_int64(stmt_, column);
}
double Stmt::Double(int column) const {
  return sqlite3_column_double(stmt_, column);
}

std::string Stmt::Text(int column) const {
  const auto* text = sqlite3_column_text(stmt_, column);
  if (text == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(text), sqlite3_column_bytes(stmt_, column));
}

std::string Stmt::Blob(int column) const {
  const void* data = sqlite3_column_blob(stmt_, column);
  if (data == nullptr) return {};
  return std::string(static_cast<const char*>(data), sqlite3_column_bytes(stmt_, column));
}

std::optional<double> Stmt::OptDouble(int column) const {
  if (IsNull(column)) return std::nullopt;
  return Double(column);
}

std::optional<int64_t> Stmt::OptInt(int column) const {
  if (IsNull(column)) return std::nullopt;
  return Int(column);
}

Result<std::unique_ptr<SqliteDb>> SqliteDb::Open(const std::string& path) {
  // A new database file is made 0600 whatever the umask: SQLite gives its
  // -wal and -shm files the database file's mode, so they follow.
  if (!path.empty() && path != ":memory:" && path.rfind("file:", 0) != 0) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd >= 0) {
      const int changed = ::fchmod(fd, 0600);
      ::close(fd);
      if (changed != 0) return Internal("cannot make database " + path + " private (chmod 0600)");
    } else if (errno != EEXIST) {
      return Internal("cannot create database " + path + ": " + std::strerror(errno));
    }
  }
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  std::unique_ptr<SqliteDb> db(new SqliteDb(raw));  // closes `raw` on every path
  if (rc != SQLITE_OK) return SqliteStatus(raw, rc, "open database " + path);
  sqlite3_extended_result_codes(raw, 1);
  return db;
}

SqliteDb::~SqliteDb() {
  cache_.clear();  // statements must be finalized before the connection closes
  sqlite3_close_v2(db_);
}

Status SqliteDb::Exec(const std::string& sql, std::string_view what) {
  CheckOffIoThread("an SQLite statement");
  char* error = nullptr;
  int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error);
  if (rc == SQLITE_OK) return Status::Ok();
  Status status = SqliteStatus(nullptr, rc, what);
  if (error != nullptr) {
    status = Status(status.code(), std::string(what) + ": " + error);
    sqlite3_free(error);
  }
  return status;
}

Result<Stmt> SqliteDb::Prepare(const char* sql) {
  auto it = cache_.find(sql);
  if (it == cache_.end()) {
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
    if (rc != SQLITE_OK) {
      sqlite3_finalize(stmt);
      return SqliteStatus(db_, rc, std::string("prepare ") + sql);
    }
    it = cache_.emplace(sql, std::unique_ptr<sqlite3_stmt, StmtDeleter>(stmt)).first;
  }
  return Stmt(db_, it->second.get());
}

int64_t SqliteDb::LastInsertRowid() const {
  return sqlite3_last_insert_rowid(db_);
}
int64_t SqliteDb::Changes() const {
  return sqlite3_changes64(db_);
}
bool SqliteDb::InTransaction() const {
  return sqlite3_get_autocommit(db_) == 0;
}

SqliteTransaction::SqliteTransaction(SqliteDb& db) : db_(db) {
  Result<Stmt> begin = db_.Prepare("BEGIN IMMEDIATE");
  begin_status_ = begin.ok() ? begin->Run() : begin.status();
  open_ = begin_status_.ok();
}

SqliteTransaction::~SqliteTransaction() {
  if (!open_) return;
  // A failed statement may already have rolled SQLite back; only roll back an open transaction.
  if (!db_.InTransaction()) return;
  Result<Stmt> rollback = db_.Prepare("ROLLBACK");
  if (rollback.ok()) (void)rollback->Run();
}

Status SqliteTransaction::Commit() {
  if (!open_) return begin_status_.ok() ? Internal("transaction already finished") : begin_status_;
  Result<Stmt> commit = db_.Prepare("COMMIT");
  Status status = commit.ok() ? commit->Run() : commit.status();
  if (status.ok()) open_ = false;
  return status;
}

}  // namespace ring
