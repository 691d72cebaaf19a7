#include "common/user_role.h"

namespace ring {

std::string_view ToString(UserRole role) {
  return role == UserRole::kAdmin ? "admin" : "user";
}

std::optional<UserRole> ParseUserRole(std::string_view text) {
  if (text == "admin") return UserRole::kAdmin;
  if (text == "user") return UserRole::kUser;
  return std::nullopt;
}

}  // namespace ring
