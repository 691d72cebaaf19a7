#include "common/bind_mount_rule.h"

#include <filesystem>

namespace ring {
namespace {

// Whether `path` is `dir` or below it.
bool IsAtOrBelow(const std::filesystem::path& path, const std::filesystem::path& dir) {
  auto p = path.begin();
  for (auto d = dir.begin(); d != dir.end(); ++d, ++p) {
    if (d->empty()) continue;  // a trailing slash
    if (p == path.end() || *p != *d) return false;
  }
  return true;
}

}  // namespace

std::optional<std::string> ReachedOwnDir(const std::string& host_path,
                                         const std::vector<std::string>& own_dirs) {
  const std::filesystem::path host = std::filesystem::path(host_path).lexically_normal();
  for (const auto& dir : own_dirs) {
    if (dir.empty()) continue;
    const std::filesystem::path own = std::filesystem::path(dir).lexically_normal();
    if (IsAtOrBelow(host, own) || IsAtOrBelow(own, host)) return dir;
  }
  return std::nullopt;
}

}  // namespace ring
