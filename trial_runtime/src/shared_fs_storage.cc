#include <fcntl.h>
#include <unistd.h>

#include <vector>

#include "ring/trial/checkpoint_storage.h"
#include "ring/trial/checkpoints.h"

namespace ring::trial {
namespace fs = std::filesystem;
namespace {

void FsyncPath(const fs::path& p, bool directory) {
  const int fd = ::open(p.c_str(), (directory ? O_RDONLY | O_DIRECTORY : O_RDONLY) | O_CLOEXEC);
  if (fd < 0) throw CheckpointError("cannot open " + p.string() + " to sync it");
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) throw CheckpointError("cannot sync " + p.string());
}

fs::path TempDir(const fs::path& root, const std::string& uuid) {
  return root / (".tmp-" + uuid);
}

}  // namespace

fs::path SharedFsStorage::BeginWrite(const std::string& uuid) {
  std::vector<fs::path> missing;  // the folders create_directories is about to make
  std::error_code ec;
  for (fs::path p = root_; !p.empty() && !fs::exists(p, ec); p = p.parent_path()) missing.push_back(p);
  fs::create_directories(root_, ec);
  if (ec) throw CheckpointError("cannot create checkpoint storage " + root_.string() + ": " + ec.message());
  // A new root must survive a crash too, or the rename into it would not.
  for (const auto& p : missing) FsyncPath(p.has_parent_path() ? p.parent_path() : fs::path("."), true);
  const fs::path tmp = TempDir(root_, uuid);
  fs::remove_all(tmp, ec);
  fs::create_directory(tmp, ec);
  if (ec) throw CheckpointError("cannot create " + tmp.string() + ": " + ec.message());
  return tmp;
}

fs::path SharedFsStorage::Commit(const std::string& uuid) {
  const fs::path tmp = TempDir(root_, uuid);
  const fs::path final_dir = root_ / uuid;
  for (const auto& entry : fs::recursive_directory_iterator(tmp))
    FsyncPath(entry.path(), entry.is_directory());
  FsyncPath(tmp, true);
  std::error_code ec;
  if (fs::exists(final_dir, ec))
    throw CheckpointError("checkpoint " + final_dir.string() + " already exists");
  fs::rename(tmp, final_dir, ec);
  if (ec) throw CheckpointError("cannot move " + tmp.string() + " into place: " + ec.message());
  FsyncPath(root_, true);  // makes the rename itself durable
  return final_dir;
}

void SharedFsStorage::Abort(const std::string& uuid) {
  std::error_code ec;
  fs::remove_all(TempDir(root_, uuid), ec);
}

void SharedFsStorage::Remove(const std::string& uuid) {
  std::error_code ec;
  fs::remove_all(root_ / uuid, ec);
}

std::unique_ptr<CheckpointStorage> MakeCheckpointStorage(const nlohmann::json& config) {
  const std::string shown = config.dump();
  if (!config.is_object()) throw ConfigError("RING_CHECKPOINT_STORAGE must be a JSON object, got " + shown);
  const std::string type =
      config.contains("type") && config["type"].is_string() ? config["type"] : "shared_fs";
  if (type != "shared_fs")
    throw ConfigError("RING_CHECKPOINT_STORAGE: checkpoint storage type \"" + type +
                      "\" is not supported by this runtime (supported: shared_fs)");
  const auto host = config.find("host_path");
  if (host == config.end() || !host->is_string() || host->get<std::string>().empty())
    throw ConfigError("RING_CHECKPOINT_STORAGE: shared_fs needs a host_path, got " + shown);
  fs::path root = host->get<std::string>();
  if (!root.is_absolute())
    throw ConfigError("RING_CHECKPOINT_STORAGE: host_path must be absolute, got " + shown);
  if (const auto sub = config.find("storage_path"); sub != config.end() && !sub->is_null()) {
    if (!sub->is_string())
      throw ConfigError("RING_CHECKPOINT_STORAGE: storage_path must be a string, got " + shown);
    const fs::path rel = sub->get<std::string>();
    if (rel.is_absolute())
      throw ConfigError("RING_CHECKPOINT_STORAGE: storage_path must be relative, got " + shown);
    if (!rel.empty()) root /= rel;
  }
  return std::make_unique<SharedFsStorage>(root.lexically_normal());
}

}  // namespace ring::trial
