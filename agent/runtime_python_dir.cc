#include "agent/runtime_python_dir.h"

#include <algorithm>
#include <system_error>
#include <vector>

namespace ring {

namespace fs = std::filesystem;

bool IsRuntimePythonDir(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "determined" / "__init__.py", ec);
}

std::string FindRuntimePythonDir(const fs::path& agent_exe) {
  std::error_code ec;
  const fs::path prefix = agent_exe.parent_path().parent_path();
  if (IsRuntimePythonDir(prefix / "python")) return (prefix / "python").lexically_normal().string();
  std::vector<fs::path> candidates;
  for (const auto& entry : fs::directory_iterator(prefix / "lib", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("python3", 0) != 0) continue;
    for (const char* packages : {"dist-packages", "site-packages"})
      candidates.push_back(entry.path() / packages);
  }
  std::sort(candidates.rbegin(), candidates.rend());  // python3.12 before python3.11
  for (const auto& dir : candidates) {
    if (IsRuntimePythonDir(dir)) return dir.lexically_normal().string();
  }
  return "";
}

}  // namespace ring
