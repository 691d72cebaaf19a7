#pragma once
// Where checkpoints may be: master.yaml's checkpoint_storage.allowed_roots.
// An experiment's host_path must be one of them or below one, and its
// storage_path a plain relative path (no "..", not absolute). Pure: no
// file system access.
#include <string>
#include <vector>

#include "common/status.h"

namespace ring {

struct CheckpointStorage;

// A checkpoint storage folder as an allowed root and a plain relative path
// below it ("" for the root itself).
struct CheckpointLocation {
  std::string root;
  std::string rel;
};

class CheckpointRoots {
 public:
  // `allowed`: absolute paths (normalised here).
  explicit CheckpointRoots(std::vector<std::string> allowed);
  const std::vector<std::string>& allowed() const { return allowed_; }
  // Why `host_path` is not allowed (naming the allowed roots), or Ok.
  Status CheckHostPath(const std::string& host_path) const;
  // Why `storage_path` is not a plain relative path, or Ok.
  static Status CheckStoragePath(const std::string& storage_path);
  // The storage's folder (host_path/storage_path) as root and rest.
  Result<CheckpointLocation> Locate(const CheckpointStorage& storage) const;
  // "a, b" for messages.
  std::string Listed() const;

 private:
  std::vector<std::string> allowed_;
};

// A uuid as the master issues them: 8-4-4-4-12 lower-case hex digits.
bool IsCheckpointUuid(const std::string& text);

}  // namespace ring
