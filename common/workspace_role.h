#pragma once
// A user's role in one workspace: its admins manage it (members, bound
// pools, projects), its members work in it.
#include <optional>
#include <string_view>

namespace ring {

enum class WorkspaceRole {
  kMember,
  kAdmin,
};

std::string_view ToString(WorkspaceRole role);  // "MEMBER", "ADMIN"
// Either case ("admin", "ADMIN"); nullopt for anything else.
std::optional<WorkspaceRole> ParseWorkspaceRole(std::string_view text);

}  // namespace ring
