#pragma once
// Checkpoints of a trial: written atomically into checkpoint storage, then
// registered with the master (file list, sizes, SHA-256), and verified
// against that registration before a restore.
//
//   std::string uuid = ctx.checkpoints().save(batches, [&](const std::filesystem::path& dir) {
//     WriteState(dir / "state.bin");
//   });
//   if (auto latest = ctx.checkpoints().latest()) LoadState(latest->path / "state.bin");
//
// Owned by the Context; call from the training thread (the chief in
// multi-rank trials).
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ring/trial/errors.h"

namespace ring::trial {

// A checkpoint is incomplete, corrupted, or cannot be stored or registered.
class CheckpointError : public TrialError {
 public:
  using TrialError::TrialError;
};

struct CheckpointFile {
  std::string path;  // relative to the checkpoint directory
  uint64_t size = 0;
  std::string sha256;  // lower-case hex
};

struct CheckpointInfo {
  std::string uuid;
  std::filesystem::path path;  // the checkpoint directory
  int64_t batches = 0;
  nlohmann::json metadata = nlohmann::json::object();
  std::vector<CheckpointFile> files;
};

// Where checkpoint directories live. SharedFsStorage is the one backend now.
class CheckpointStorage {
 public:
  virtual ~CheckpointStorage() = default;
  // A fresh, empty directory to write checkpoint `uuid` into.
  virtual std::filesystem::path BeginWrite(const std::string& uuid) = 0;
  // Makes the written directory durable and visible under its uuid; returns its path.
  virtual std::filesystem::path Commit(const std::string& uuid) = 0;
  // Drops an unfinished write.
  virtual void Abort(const std::string& uuid) = 0;
};

// <host_path>/<storage_path>/<uuid>: a folder every agent mounts.
class SharedFsStorage : public CheckpointStorage {
 public:
  explicit SharedFsStorage(std::filesystem::path root) : root_(std::move(root)) {}
  std::filesystem::path BeginWrite(const std::string& uuid) override;
  std::filesystem::path Commit(const std::string& uuid) override;
  void Abort(const std::string& uuid) override;
  const std::filesystem::path& root() const { return root_; }

 private:
  std::filesystem::path root_;
};

namespace detail {
class TrialApi;
}

class Checkpoints {
 public:
  using Writer = std::function<void(const std::filesystem::path& dir)>;

  // `api` is null in local mode; `resume` is the directory to resume from, if any.
  Checkpoints(std::unique_ptr<CheckpointStorage> storage, std::shared_ptr<detail::TrialApi> api,
              std::filesystem::path resume, int64_t min_period_batches);
  ~Checkpoints();

  // Writes a checkpoint with `writer` into a temporary directory, fsyncs it,
  // moves it into place and registers it. Returns its uuid. Nothing is
  // registered when the writer throws or any step fails (CheckpointError).
  std::string save(int64_t batches, const Writer& writer,
                   const nlohmann::json& metadata = nlohmann::json::object());

  // The checkpoint this run resumes from, every file verified (size and
  // SHA-256) against its registration; nullopt when starting afresh. Throws
  // CheckpointError naming the file on any mismatch.
  std::optional<CheckpointInfo> latest();

  // True when min_checkpoint_period.batches have passed since the last save
  // (or the start); always false when the experiment sets no period.
  bool due(int64_t batches) const;

 private:
  std::unique_ptr<CheckpointStorage> storage_;
  std::shared_ptr<detail::TrialApi> api_;
  std::filesystem::path resume_;
  int64_t min_period_ = 0;
  int64_t last_saved_ = 0;
};

// SHA-256 of a file's content, lower-case hex.
std::string Sha256File(const std::filesystem::path& path);

}  // namespace ring::trial
