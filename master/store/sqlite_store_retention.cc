// SqliteStore: what retention deletes, and giving the freed pages back.
#include "master/store/sqlite_db.h"
#include "master/store/sqlite_store.h"
#include "master/store/store_util.h"

namespace ring {
namespace {

Result<int64_t> IntPragma(SqliteDb& db, const char* sql) {
  Result<Stmt> pragma = db.Prepare(sql);
  if (!pragma.ok()) return pragma.status();
  Result<bool> row = pragma->Step();
  if (!row.ok()) return row.status();
  return *row ? pragma->Int(0) : int64_t{0};
}

}  // namespace

Result<int64_t> SqliteStore::CountMetrics(int64_t trial_id, MetricKind kind) {
  std::lock_guard lock(mu_);
  Result<Stmt> count = db_->Prepare("SELECT COUNT(*) FROM metrics WHERE trial_id = ?1 AND kind = ?2");
  if (!count.ok()) return count.status();
  count->Bind(1, trial_id).Bind(2, ToString(kind));
  Result<bool> row = count->Step();
  if (!row.ok()) return row.status();
  return count->Int(0);
}

Result<int64_t> SqliteStore::DeleteMetrics(int64_t trial_id, MetricKind kind,
                                           const std::vector<int64_t>& batches) {
  const WriteNotice changes(metrics_generation_);
  if (batches.empty()) return int64_t{0};
  std::lock_guard lock(mu_);
  SqliteTransaction tx(*db_);
  if (!tx.status().ok()) return tx.status();
  int64_t deleted = 0;
  for (const int64_t b : batches) {
    Result<Stmt> del = db_->Prepare("DELETE FROM metrics WHERE trial_id = ?1 AND kind = ?2 AND batches = ?3");
    if (!del.ok()) return del.status();
    del->Bind(1, trial_id).Bind(2, ToString(kind)).Bind(3, b);
    if (Status s = del->Run(); !s.ok())
      return WithContext(
          s, "delete " + std::string(ToString(kind)) + " metrics of trial " + std::to_string(trial_id));
    deleted += db_->Changes();
  }
  if (Status s = tx.Commit(); !s.ok()) return s;
  return deleted;
}

Result<int64_t> SqliteStore::DeleteLogs(int64_t trial_id) {
  std::lock_guard lock(mu_);
  Result<Stmt> del = db_->Prepare("DELETE FROM logs WHERE trial_id = ?1");
  if (!del.ok()) return del.status();
  del->Bind(1, trial_id);
  if (Status s = del->Run(); !s.ok())
    return WithContext(s, "delete logs of trial " + std::to_string(trial_id));
  return db_->Changes();
}

// The database keeps auto_vacuum = INCREMENTAL (SqliteStore::Open), so freed
// pages go back a slice at a time, each slice its own short write, and the
// writers of metrics and logs wait for one slice at most.
Status SqliteStore::Compact() {
  constexpr int64_t kPagesPerSlice = 2048;
  for (;;) {
    std::lock_guard lock(mu_);
    Result<int64_t> free_pages = IntPragma(*db_, "PRAGMA freelist_count");
    if (!free_pages.ok()) return free_pages.status();
    if (*free_pages == 0) break;
    if (Status s = db_->Exec("PRAGMA incremental_vacuum(" + std::to_string(kPagesPerSlice) + ")",
                             "incremental vacuum");
        !s.ok())
      return s;
    Result<int64_t> left = IntPragma(*db_, "PRAGMA freelist_count");
    if (!left.ok()) return left.status();
    if (*left >= *free_pages) break;  // auto_vacuum is off: nothing to give back this way
  }
  std::lock_guard lock(mu_);
  // TRUNCATE also shrinks the database file to its last used page. Readers
  // still in the log make it stop early; that is not an error.
  return db_->Exec("PRAGMA wal_checkpoint(TRUNCATE)", "checkpoint the write-ahead log");
}

}  // namespace ring
