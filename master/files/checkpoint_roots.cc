#include "master/files/checkpoint_roots.h"

#include <filesystem>

#include "master/files/nofollow.h"
#include "master/store/store.h"

namespace ring {
namespace fs = std::filesystem;
namespace {

std::string Normal(const std::string& path) {
  std::string s = fs::path(path).lexically_normal().string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

bool HasDotDot(const std::string& path) {
  for (const auto& part : fs::path(path))
    if (part == "..") return true;
  return false;
}

}  // namespace

CheckpointRoots::CheckpointRoots(std::vector<std::string> allowed) {
  for (auto& root : allowed) allowed_.push_back(Normal(root));
}

std::string CheckpointRoots::Listed() const {
  std::string out;
  for (const auto& root : allowed_) out += (out.empty() ? "" : ", ") + root;
  return out;
}

Status CheckpointRoots::CheckHostPath(const std::string& host_path) const {
  if (host_path.empty() || host_path.front() != '/')
    return InvalidArgument("must be an absolute path, got \"" + host_path + "\"");
  if (HasDotDot(host_path)) return InvalidArgument("must not contain \"..\", got \"" + host_path + "\"");
  const std::string path = Normal(host_path);
  for (const auto& root : allowed_)
    if (path == root || (path.size() > root.size() && path.compare(0, root.size(), root) == 0 &&
                         (root == "/" || path[root.size()] == '/')))
      return Status::Ok();
  return InvalidArgument("\"" + host_path + "\" is outside the allowed checkpoint roots (" + Listed() +
                         "; master.yaml checkpoint_storage.allowed_roots)");
}

Status CheckpointRoots::CheckStoragePath(const std::string& storage_path) {
  if (storage_path.empty()) return Status::Ok();
  if (storage_path.front() == '/')
    return InvalidArgument("must be a relative path, got \"" + storage_path + "\"");
  std::string trimmed = storage_path;
  while (!trimmed.empty() && trimmed.back() == '/') trimmed.pop_back();
  if (!IsPlainRelativePath(trimmed))
    return InvalidArgument("must be a plain relative path (no \"..\", \".\" or empty parts), got \"" +
                           storage_path + "\"");
  return Status::Ok();
}

Result<CheckpointLocation> CheckpointRoots::Locate(const CheckpointStorage& storage) const {
  if (Status s = CheckHostPath(storage.host_path); !s.ok())
    return Status(s.code(), "checkpoint_storage.host_path " + s.message());
  if (Status s = CheckStoragePath(storage.storage_path); !s.ok())
    return Status(s.code(), "checkpoint_storage.storage_path " + s.message());
  const std::string path = Normal(storage.host_path);
  CheckpointLocation best;
  for (const auto& root : allowed_) {  // the deepest root that holds it
    const bool holds = path == root ||
                       (path.compare(0, root.size(), root) == 0 && (root == "/" || path[root.size()] == '/'));
    if (holds && root.size() >= best.root.size()) best.root = root;
  }
  best.rel = path.size() > best.root.size() ? path.substr(best.root == "/" ? 1 : best.root.size() + 1) : "";
  std::string sub = storage.storage_path;
  while (!sub.empty() && sub.back() == '/') sub.pop_back();
  if (!sub.empty()) best.rel += (best.rel.empty() ? "" : "/") + sub;
  return best;
}

bool IsCheckpointUuid(const std::string& text) {
  if (text.size() != 36) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (c != '-') return false;
    } else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
      return false;
    }
  }
  return true;
}

}  // namespace ring
