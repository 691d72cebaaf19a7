#pragma once
// What a user may do: an admin manages everything, a user what they own.
#include <optional>
#include <string_view>

namespace ring {

enum class UserRole {
  kUser,
  kAdmin,
};

std::string_view ToString(UserRole role);  // "user", "admin"
std::optional<UserRole> ParseUserRole(std::string_view text);

}  // namespace ring
