#include "common/workspace_role.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace ring {

std::string_view ToString(WorkspaceRole role) {
  switch (role) {
    case WorkspaceRole::kMember:
      return "MEMBER";
    case WorkspaceRole::kAdmin:
      return "ADMIN";
  }
  return "MEMBER";
}

std::optional<WorkspaceRole> ParseWorkspaceRole(std::string_view text) {
  std::string upper(text);
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  if (upper == "MEMBER") return WorkspaceRole::kMember;
  if (upper == "ADMIN") return WorkspaceRole::kAdmin;
  return std::nullopt;
}

}  // namespace ring
