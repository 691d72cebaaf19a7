// MemoryStore: checkpoints, mirroring SqliteStore's constraints.
#include <algorithm>

#include "master/store/memory_store.h"
#include "master/store/store_util.h"

namespace ring {
Status MemoryStore::AddCheckpoint(const CheckpointRecord& c) {
  std::lock_guard lock(mu_);
  if (auto it = checkpoints_.find(c.uuid); it != checkpoints_.end()) {
    if (it->second.trial_id == c.trial_id && it->second.batches == c.batches) return Status::Ok();
    return Conflict("checkpoint " + c.uuid + " is already registered for another trial or batch");
  }
  if (c.uuid.empty()) return InvalidArgument("add checkpoint: uuid must not be empty");
  if (c.batches < 0) return InvalidArgument("add checkpoint " + c.uuid + ": batches must not be negative");
  if (!trials_.contains(c.trial_id))
    return InvalidArgument("add checkpoint " + c.uuid + ": trial does not exist");
  CheckpointRecord stored = c;
  stored.created_at = NowRfc3339();
  checkpoints_.emplace(c.uuid, std::move(stored));
  return Status::Ok();
}

Result<CheckpointRecord> MemoryStore::GetCheckpoint(const std::string& uuid) {
  std::lock_guard lock(mu_);
  auto it = checkpoints_.find(uuid);
  if (it == checkpoints_.end()) return NotFound("checkpoint " + uuid + " does not exist");
  return it->second;
}

Result<std::vector<CheckpointRecord>> MemoryStore::ListCheckpoints(int64_t trial_id) {
  std::lock_guard lock(mu_);
  std::vector<CheckpointRecord> out;
  for (const auto& [uuid, c] : checkpoints_)
    if (c.trial_id == trial_id) out.push_back(c);
  std::sort(out.begin(), out.end(), [](const CheckpointRecord& a, const CheckpointRecord& b) {
    return std::tie(a.batches, a.created_at, a.uuid) < std::tie(b.batches, b.created_at, b.uuid);
  });
  return out;
}

Status MemoryStore::SetCheckpointState(const std::string& uuid, CheckpointState state) {
  std::lock_guard lock(mu_);
  auto it = checkpoints_.find(uuid);
  if (it == checkpoints_.end()) return NotFound("checkpoint " + uuid + " does not exist");
  it->second.state = state;
  return Status::Ok();
}

Status MemoryStore::ReserveCheckpoint(const CheckpointReservation& r) {
  std::lock_guard lock(mu_);
  if (r.uuid.size() != 36) return InvalidArgument("reserve checkpoint: uuid must have 36 characters");
  if (checkpoints_.contains(r.uuid) || reservations_.contains(r.uuid))
    return Conflict("checkpoint " + r.uuid + " was already issued");
  if (!trials_.contains(r.trial_id))
    return InvalidArgument("reserve checkpoint " + r.uuid + ": trial does not exist");
  CheckpointReservation stored = r;
  stored.created_at = NowRfc3339();
  reservations_.emplace(r.uuid, std::move(stored));
  return Status::Ok();
}

Result<CheckpointReservation> MemoryStore::GetCheckpointReservation(const std::string& uuid) {
  std::lock_guard lock(mu_);
  auto it = reservations_.find(uuid);
  if (it == reservations_.end()) return NotFound("checkpoint " + uuid + " was not issued");
  return it->second;
}

Status MemoryStore::DeleteCheckpointReservation(const std::string& uuid) {
  std::lock_guard lock(mu_);
  reservations_.erase(uuid);
  return Status::Ok();
}

}  // namespace ring
