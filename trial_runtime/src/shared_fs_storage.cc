#include <fcntl.h>
#include <unistd.h>

#include "ring/trial/checkpoints.h"

namespace ring::trial {
namespace fs = std::filesystem;
namespace {

void FsyncPath(const fs::path& p, bool directory) {
  int fd = ::open(p.c_str(), (directory ? O_RDONLY | O_DIRECTORY : O_RDONLY) | O_CLOEXEC);
  if (fd < 0) throw CheckpointError("cannot open " + p.string() + " to sync it");
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) throw CheckpointError("cannot sync " + p.string());
}

}  // namespace

fs::path SharedFsStorage::BeginWrite(const std::string& uuid) {
  std::error_code ec;
  fs::create_directories(root_, ec);
  if (ec) throw CheckpointError("cannot create checkpoint storage " + root_.string() + ": " + ec.message());
  const fs::path tmp = root_ / (".tmp-" + uuid);
  fs::remove_all(tmp, ec);
  fs::create_directory(tmp, ec);
  if (ec) throw CheckpointError("cannot create " + tmp.string() + ": " + ec.message());
  return tmp;
}

fs::path SharedFsStorage::Commit(const std::string& uuid) {
  const fs::path tmp = root_ / (".tmp-" + uuid);
  const fs::path final_dir = root_ / uuid;
  for (const auto& entry : fs::recursive_directory_iterator(tmp))
    FsyncPath(entry.path(), entry.is_directory());
  FsyncPath(tmp, true);
  std::error_code ec;
  fs::rename(tmp, final_dir, ec);
  if (ec) throw CheckpointError("cannot move " + tmp.string() + " into place: " + ec.message());
  FsyncPath(root_, true);  // the rename itself is durable
  return final_dir;
}

void SharedFsStorage::Abort(const std::string& uuid) {
  std::error_code ec;
  fs::remove_all(root_ / (".tmp-" + uuid), ec);
}

}  // namespace ring::trial
