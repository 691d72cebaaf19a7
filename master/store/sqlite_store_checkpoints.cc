// SqliteStore: the checkpoints table.
#include <utility>

#include "master/store/record_json.h"
#include "master/store/sqlite_db.h"
#include "master/store/sqlite_store.h"
#include "master/store/store_util.h"

namespace ring {
namespace {

constexpr const char* kCheckpointColumns =
    "uuid, trial_id, allocation_id, batches, state, storage_json, resources_json, metadata_json, created_at";

Result<CheckpointRecord> ReadCheckpoint(const Stmt& s) {
  CheckpointRecord c;
  c.uuid = s.Text(0);
  c.trial_id = s.Int(1);
  c.allocation_id = s.Text(2);
  c.batches = s.Int(3);
  const std::string state = s.Text(4);
  if (state == "ACTIVE" || state == "DELETED") {
    c.state = state == "ACTIVE" ? CheckpointState::kActive : CheckpointState::kDeleted;
  } else {
    return Internal("checkpoint " + c.uuid + " has unknown state '" + state + "'");
  }
  auto storage = StorageFromJson(s.Text(5));
  if (!storage.ok()) return WithContext(storage.status(), "checkpoint " + c.uuid);
  c.storage = *storage;
  auto resources = FilesFromJson(s.Text(6));
  if (!resources.ok()) return WithContext(resources.status(), "checkpoint " + c.uuid);
  c.resources = std::move(resources).value();
  c.metadata_json = s.Text(7);
  c.created_at = s.Text(8);
  return c;
}

}  // namespace

Status SqliteStore::AddCheckpoint(const CheckpointRecord& c) {
  std::lock_guard lock(mu_);
  SqliteTransaction tx(*db_);
  if (!tx.status().ok()) return tx.status();
  Result<Stmt> existing = db_->Prepare("SELECT trial_id, batches FROM checkpoints WHERE uuid = ?1");
  if (!existing.ok()) return existing.status();
  existing->Bind(1, c.uuid);
  Result<bool> row = existing->Step();
  if (!row.ok()) return row.status();
  if (*row) {  // a retried registration is a no-op; another checkpoint under the same uuid is not
    if (existing->Int(0) == c.trial_id && existing->Int(1) == c.batches) return Status::Ok();
    return Conflict("checkpoint " + c.uuid + " is already registered for another trial or batch");
  }
  Result<Stmt> insert = db_->Prepare(
      "INSERT INTO checkpoints (uuid, trial_id, allocation_id, batches, state, storage_json, resources_json, "
      "metadata_json, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
  if (!insert.ok()) return insert.status();
  insert->Bind(1, c.uuid)
      .Bind(2, c.trial_id)
      .Bind(3, c.allocation_id)
      .Bind(4, c.batches)
      .Bind(5, ToString(c.state));
  insert->Bind(6, StorageJson(c.storage))
      .Bind(7, FilesJson(c.resources))
      .Bind(8, c.metadata_json)
      .Bind(9, NowRfc3339());
  if (Status s = insert->Run(); !s.ok()) return WithContext(s, "add checkpoint " + c.uuid);
  return tx.Commit();
}

Result<CheckpointRecord> SqliteStore::GetCheckpoint(const std::string& uuid) {
  std::lock_guard lock(mu_);
  static const std::string sql =
      std::string("SELECT ") + kCheckpointColumns + " FROM checkpoints WHERE uuid = ?1";
  Result<Stmt> select = db_->Prepare(sql.c_str());
  if (!select.ok()) return select.status();
  select->Bind(1, uuid);
  Result<bool> row = select->Step();
  if (!row.ok()) return row.status();
  if (!*row) return NotFound("checkpoint " + uuid + " does not exist");
  return ReadCheckpoint(*select);
}

Result<std::vector<CheckpointRecord>> SqliteStore::ListCheckpoints(int64_t trial_id) {
  std::lock_guard lock(mu_);
  static const std::string sql = std::string("SELECT ") + kCheckpointColumns +
                                 " FROM checkpoints WHERE trial_id = ?1 ORDER BY batches, created_at, uuid";
  Result<Stmt> select = db_->Prepare(sql.c_str());
  if (!select.ok()) return select.status();
  select->Bind(1, trial_id);
  std::vector<CheckpointRecord> out;
  for (;;) {
    Result<bool> row = select->Step();
    if (!row.ok()) return row.status();
    if (!*row) return out;
    Result<CheckpointRecord> c = ReadCheckpoint(*select);
    if (!c.ok()) return c.status();
    out.push_back(std::move(c).value());
  }
}

Status SqliteStore::SetCheckpointState(const std::string& uuid, CheckpointState state) {
  std::lock_guard lock(mu_);
  Result<Stmt> update = db_->Prepare("UPDATE checkpoints SET state = ?2 WHERE uuid = ?1");
  if (!update.ok()) return update.status();
  update->Bind(1, uuid).Bind(2, ToString(state));
  if (Status s = update->Run(); !s.ok()) return WithContext(s, "update checkpoint " + uuid);
  if (db_->Changes() == 0) return NotFound("checkpoint " + uuid + " does not exist");
  return Status::Ok();
}

Status SqliteStore::ReserveCheckpoint(const CheckpointReservation& r) {
  std::lock_guard lock(mu_);
  SqliteTransaction tx(*db_);
  if (!tx.status().ok()) return tx.status();
  Result<Stmt> existing = db_->Prepare(
      "SELECT 1 FROM checkpoints WHERE uuid = ?1 UNION ALL SELECT 1 FROM checkpoint_reservations WHERE uuid "
      "= ?1");
  if (!existing.ok()) return existing.status();
  existing->Bind(1, r.uuid);
  Result<bool> row = existing->Step();
  if (!row.ok()) return row.status();
  if (*row) return Conflict("checkpoint " + r.uuid + " was already issued");
  Result<Stmt> insert = db_->Prepare(
      "INSERT INTO checkpoint_reservations (uuid, trial_id, allocation_id, storage_json, created_at) "
      "VALUES (?1, ?2, ?3, ?4, ?5)");
  if (!insert.ok()) return insert.status();
  insert->Bind(1, r.uuid).Bind(2, r.trial_id).Bind(3, r.allocation_id);
  insert->Bind(4, StorageJson(r.storage)).Bind(5, NowRfc3339());
  if (Status s = insert->Run(); !s.ok()) return WithContext(s, "reserve checkpoint " + r.uuid);
  return tx.Commit();
}

Result<CheckpointReservation> SqliteStore::GetCheckpointReservation(const std::string& uuid) {
  std::lock_guard lock(mu_);
  Result<Stmt> select = db_->Prepare(
      "SELECT uuid, trial_id, allocation_id, storage_json, created_at FROM checkpoint_reservations "
      "WHERE uuid = ?1");
  if (!select.ok()) return select.status();
  select->Bind(1, uuid);
  Result<bool> row = select->Step();
  if (!row.ok()) return row.status();
  if (!*row) return NotFound("checkpoint " + uuid + " was not issued");
  CheckpointReservation r;
  r.uuid = select->Text(0);
  r.trial_id = select->Int(1);
  r.allocation_id = select->Text(2);
  auto storage = StorageFromJson(select->Text(3));
  if (!storage.ok()) return WithContext(storage.status(), "checkpoint reservation " + uuid);
  r.storage = *storage;
  r.created_at = select->Text(4);
  return r;
}

Status SqliteStore::DeleteCheckpointReservation(const std::string& uuid) {
  std::lock_guard lock(mu_);
  Result<Stmt> del = db_->Prepare("DELETE FROM checkpoint_reservations WHERE uuid = ?1");
  if (!del.ok()) return del.status();
  del->Bind(1, uuid);
  return del->Run();
}

}  // namespace ring
