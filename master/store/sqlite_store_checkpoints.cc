// SqliteStore: the checkpoints table.
#include <utility>

#include "master/store/sqlite_db.h"
#include "master/store/sqlite_store.h"
#include "master/store/store_util.h"

namespace ring {
namespace {

constexpr const char* kCheckpointColumns =
    "uuid, trial_id, allocation_id, batches, state, storage_json, resources_json, metadata_json, created_at";

CheckpointRecord ReadCheckpoint(const Stmt& s) {
  CheckpointRecord c;
  c.uuid = s.Text(0);
  c.trial_id = s.Int(1);
  c.allocation_id = s.Text(2);
  c.batches = s.Int(3);
  c.state = s.Text(4);
  c.storage_json = s.Text(5);
  c.resources_json = s.Text(6);
  c.metadata_json = s.Text(7);
  c.created_at = s.Text(8);
  return c;
}

bool KnownCheckpointState(const std::string& state) {
  return state == "ACTIVE" || state == "DELETED";
}

}  // namespace

Status SqliteStore::AddCheckpoint(const CheckpointRecord& c) {
  if (!KnownCheckpointState(c.state)) return InvalidArgument("checkpoint state must be ACTIVE or DELETED");
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
  insert->Bind(1, c.uuid).Bind(2, c.trial_id).Bind(3, c.allocation_id).Bind(4, c.batches).Bind(5, c.state);
  insert->Bind(6, c.storage_json).Bind(7, c.resources_json).Bind(8, c.metadata_json).Bind(9, NowRfc3339());
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
    out.push_back(ReadCheckpoint(*select));
  }
}

Status SqliteStore::SetCheckpointState(const std::string& uuid, const std::string& state) {
  if (!KnownCheckpointState(state)) return InvalidArgument("checkpoint state must be ACTIVE or DELETED");
  std::lock_guard lock(mu_);
  Result<Stmt> update = db_->Prepare("UPDATE checkpoints SET state = ?2 WHERE uuid = ?1");
  if (!update.ok()) return update.status();
  update->Bind(1, uuid).Bind(2, state);
  if (Status s = update->Run(); !s.ok()) return WithContext(s, "update checkpoint " + uuid);
  if (db_->Changes() == 0) return NotFound("checkpoint " + uuid + " does not exist");
  return Status::Ok();
}

}  // namespace ring
