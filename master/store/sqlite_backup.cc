#include "master/store/sqlite_backup.h"

#include <sqlite3.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <thread>

namespace ring {
namespace {

struct CloseDb {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
using Db = std::unique_ptr<sqlite3, CloseDb>;

Result<Db> Open(const std::string& path, int flags) {
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  Db db(raw);
  if (rc != SQLITE_OK)
    return Internal("cannot open " + path + ": " + (raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc)));
  sqlite3_busy_timeout(raw, 5000);
  return db;
}

}  // namespace

Result<int64_t> BackupSqliteDatabase(const std::string& source, const std::string& dest) {
  std::error_code ec;
  if (std::filesystem::exists(dest, ec)) return Conflict("backup file " + dest + " exists");
  auto src = Open(source, SQLITE_OPEN_READONLY);
  if (!src.ok()) return src.status();
  auto out = Open(dest, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  if (!out.ok()) return out.status();
  sqlite3_backup* backup = sqlite3_backup_init(out->get(), "main", src->get(), "main");
  if (backup == nullptr) return Internal(std::string("backup: ") + sqlite3_errmsg(out->get()));
  int rc = SQLITE_OK;
  do {
    rc = sqlite3_backup_step(backup, 256);
    if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  } while (rc == SQLITE_OK || rc == SQLITE_BUSY || rc == SQLITE_LOCKED);
  sqlite3_backup_finish(backup);
  if (rc != SQLITE_DONE) {
    out->reset();
    std::filesystem::remove(dest, ec);
    return Internal(std::string("backup of ") + source + " failed: " + sqlite3_errstr(rc));
  }
  // The copy must be whole before anyone relies on it.
  sqlite3_stmt* check = nullptr;
  std::string verdict = "no answer";
  if (sqlite3_prepare_v2(out->get(), "PRAGMA integrity_check", -1, &check, nullptr) == SQLITE_OK &&
      sqlite3_step(check) == SQLITE_ROW)
    verdict = reinterpret_cast<const char*>(sqlite3_column_text(check, 0));
  sqlite3_finalize(check);
  out->reset();
  if (verdict != "ok") {
    std::filesystem::remove(dest, ec);
    return Internal("the backup of " + source + " fails integrity_check: " + verdict);
  }
  const auto size = std::filesystem::file_size(dest, ec);
  return ec ? int64_t{0} : static_cast<int64_t>(size);
}

}  // namespace ring
