#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

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

// Makes a rename into `root` durable: an fsync of the folder, or, where the
// trial may add entries but not read the folder (a shared root of mode 3773:
// docs/operations.md), a sync of the file system that holds it.
void SyncParent(const fs::path& root, const fs::path& renamed) {
  const int fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    const int rc = ::fsync(fd);
    ::close(fd);
    if (rc != 0) throw CheckpointError("cannot sync " + root.string());
    return;
  }
  if (errno != EACCES) throw CheckpointError("cannot open " + root.string() + " to sync it");
  const int inside = ::open(renamed.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (inside < 0) throw CheckpointError("cannot open " + renamed.string() + " to sync it");
  const int rc = ::syncfs(inside);
  ::close(inside);
  if (rc != 0) throw CheckpointError("cannot sync the file system of " + root.string());
}

fs::path TempDir(const fs::path& root, const std::string& uuid) {
  return root / (".tmp-" + uuid);
}

// Sets the modes of a written checkpoint whatever the umask and whatever the
// writer chose: folders 0770, files 0640 (0750 when the owner may run them).
// The group is the one the files got from the storage folder (setgid: the
// master's group), so the master reads and deletes them and other users,
// outside that group, cannot read them (docs/operations.md, "Checkpoint
// folders"). Links are never followed (the writer may leave none).
void SealTree(int dir_fd, const std::string& shown) {
  if (::fchmod(dir_fd, 0770) != 0) throw CheckpointError("cannot set the mode of " + shown);
  const int dup = ::fcntl(dir_fd, F_DUPFD_CLOEXEC, 0);
  DIR* dir = dup >= 0 ? ::fdopendir(dup) : nullptr;
  if (dir == nullptr) {
    if (dup >= 0) ::close(dup);
    throw CheckpointError("cannot list " + shown);
  }
  std::vector<std::string> names;
  while (struct dirent* e = ::readdir(dir)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  ::closedir(dir);
  for (const auto& name : names) {
    const int fd = ::openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) throw CheckpointError("cannot open " + shown + "/" + name + " (links are not stored)");
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
      ::close(fd);
      throw CheckpointError("cannot stat " + shown + "/" + name);
    }
    try {
      if (S_ISDIR(st.st_mode)) {
        SealTree(fd, shown + "/" + name);
      } else if (::fchmod(fd, (st.st_mode & S_IXUSR) ? 0750 : 0640) != 0) {
        throw CheckpointError("cannot set the mode of " + shown + "/" + name);
      }
    } catch (...) {
      ::close(fd);
      throw;
    }
    ::close(fd);
  }
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
  // Owner only while it is written; the group comes from the storage folder
  // (setgid) and is given read access when it is sealed (Commit).
  if (::mkdir(tmp.c_str(), 0700) != 0)
    throw CheckpointError("cannot create " + tmp.string() + ": " + std::strerror(errno));
  return tmp;
}

fs::path SharedFsStorage::WriteDir(const std::string& uuid) const {
  return TempDir(root_, uuid);
}

fs::path SharedFsStorage::Commit(const std::string& uuid) {
  const fs::path tmp = TempDir(root_, uuid);
  const fs::path final_dir = root_ / uuid;
  {
    const int fd = ::open(tmp.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) throw CheckpointError("cannot open " + tmp.string());
    try {
      SealTree(fd, tmp.string());
    } catch (...) {
      ::close(fd);
      throw;
    }
    ::close(fd);
  }
  for (const auto& entry : fs::recursive_directory_iterator(tmp))
    FsyncPath(entry.path(), entry.is_directory());
  FsyncPath(tmp, true);
  std::error_code ec;
  if (fs::exists(final_dir, ec))
    throw CheckpointError("checkpoint " + final_dir.string() + " already exists");
  fs::rename(tmp, final_dir, ec);
  if (ec) throw CheckpointError("cannot move " + tmp.string() + " into place: " + ec.message());
  SyncParent(root_, final_dir);  // makes the rename itself durable
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
