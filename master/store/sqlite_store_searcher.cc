// SqliteStore: searcher snapshots and the trials a searcher step creates.
#include "master/store/sqlite_db.h"
#include "master/store/sqlite_store.h"
#include "master/store/store_util.h"

namespace ring {

Result<std::vector<int64_t>> SqliteStore::CommitSearcherStep(const SearcherStep& step) {
  const WriteNotice changes(experiments_generation_);
  for (const auto& t : step.new_trials)
    if (t.experiment_id != step.experiment_id || !t.request_id)
      return InvalidArgument("searcher step: every new trial needs the experiment and a request id");
  std::lock_guard lock(mu_);
  SqliteTransaction tx(*db_);
  if (!tx.status().ok()) return tx.status();
  std::vector<int64_t> ids;
  for (const auto& t : step.new_trials) {
    auto id = InsertTrialLocked(t);
    if (!id.ok()) return id.status();  // the transaction rolls back
    ids.push_back(*id);
  }
  Result<Stmt> upsert = db_->Prepare(
      "INSERT INTO searcher_snapshots (experiment_id, snapshot, events, updated_at) VALUES (?1, ?2, 1, ?3) "
      "ON CONFLICT (experiment_id) DO UPDATE SET snapshot = excluded.snapshot, events = events + 1, "
      "updated_at = excluded.updated_at");
  if (!upsert.ok()) return upsert.status();
  upsert->Bind(1, step.experiment_id).Bind(2, step.snapshot_json).Bind(3, NowRfc3339());
  if (Status s = upsert->Run(); !s.ok())
    return WithContext(s, "save the searcher of experiment " + std::to_string(step.experiment_id));
  if (Status s = tx.Commit(); !s.ok()) return s;
  return ids;
}

Result<std::string> SqliteStore::GetSearcherSnapshot(int64_t experiment_id) {
  std::lock_guard lock(mu_);
  Result<Stmt> select = db_->Prepare("SELECT snapshot FROM searcher_snapshots WHERE experiment_id = ?1");
  if (!select.ok()) return select.status();
  select->Bind(1, experiment_id);
  Result<bool> row = select->Step();
  if (!row.ok()) return row.status();
  if (!*row) return NotFound("experiment " + std::to_string(experiment_id) + " has no searcher snapshot");
  return select->Text(0);
}

}  // namespace ring
