#pragma once
// Checkpoints as the store keeps them: registered ones, their files and
// storage, and the uuids issued before a trial writes them.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ring {

enum class CheckpointState {
  kActive,
  kDeleted,  // garbage collected: its files are gone
};
std::string_view ToString(CheckpointState state);  // "ACTIVE", "DELETED"

// Where a checkpoint's files are: <host_path>/<storage_path>/<uuid>.
struct CheckpointStorage {
  std::string type = "shared_fs";
  std::string host_path;
  std::string storage_path;  // relative to host_path; may be empty
  bool operator==(const CheckpointStorage&) const = default;
};

// One file of a checkpoint, relative to its folder.
struct CheckpointFile {
  std::string path;
  int64_t size = 0;
  std::string sha256;  // 64 lower-case hex digits
  bool operator==(const CheckpointFile&) const = default;
};

// A checkpoint registered by a trial after it was completely written.
struct CheckpointRecord {
  std::string uuid;
  int64_t trial_id = 0;
  std::string allocation_id;
  int64_t batches = 0;
  CheckpointState state = CheckpointState::kActive;
  CheckpointStorage storage;
  std::vector<CheckpointFile> resources;
  std::string metadata_json = "{}";  // the trial's own metadata, kept as it sent it
  std::string created_at;            // set by the store
};

// A checkpoint uuid the master issued to an allocation before its trial wrote
// the files: registration accepts only these, in this storage.
struct CheckpointReservation {
  std::string uuid;
  int64_t trial_id = 0;
  std::string allocation_id;
  CheckpointStorage storage;
  std::string created_at;  // set by the store
};

}  // namespace ring
