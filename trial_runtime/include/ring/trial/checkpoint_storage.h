#pragma once
// Where checkpoint directories live. A checkpoint is written into a
// temporary directory, made durable and moved into place under its uuid in
// one step, so a reader never sees a half-written checkpoint. SharedFsStorage
// (a folder every agent mounts) is the one backend now; others implement the
// same steps. Used by Checkpoints on the training thread.
#include <filesystem>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

namespace ring::trial {

class CheckpointStorage {
 public:
  virtual ~CheckpointStorage() = default;
  // A fresh, empty directory to write checkpoint `uuid` into.
  virtual std::filesystem::path BeginWrite(const std::string& uuid) = 0;
  // The directory BeginWrite(uuid) made, as another rank reaches it (the
  // parts of a sharded checkpoint are written into it); nothing is created.
  virtual std::filesystem::path WriteDir(const std::string& uuid) const = 0;
  // Makes the written directory durable and visible under its uuid; returns
  // its path. Throws CheckpointError; the write is then still unfinished.
  virtual std::filesystem::path Commit(const std::string& uuid) = 0;
  // Drops an unfinished write (nothing happens when there is none).
  virtual void Abort(const std::string& uuid) = 0;
  // Deletes a committed checkpoint that the master refused to register.
  virtual void Remove(const std::string& uuid) = 0;
};

// <root>/<uuid>, written through <root>/.tmp-<uuid>: every file and the
// directory fsynced, renamed into place, then the parent fsynced.
class SharedFsStorage : public CheckpointStorage {
 public:
  explicit SharedFsStorage(std::filesystem::path root) : root_(std::move(root)) {}
  std::filesystem::path BeginWrite(const std::string& uuid) override;
  std::filesystem::path WriteDir(const std::string& uuid) const override;
  std::filesystem::path Commit(const std::string& uuid) override;
  void Abort(const std::string& uuid) override;
  void Remove(const std::string& uuid) override;
  const std::filesystem::path& root() const { return root_; }

 private:
  std::filesystem::path root_;
};

// The storage RING_CHECKPOINT_STORAGE describes:
// {"type": "shared_fs", "host_path": "/abs", "storage_path": "rel or empty"}
// (a missing type means shared_fs). Throws ConfigError naming what is wrong.
std::unique_ptr<CheckpointStorage> MakeCheckpointStorage(const nlohmann::json& config);

}  // namespace ring::trial
