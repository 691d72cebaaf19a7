#pragma once
// Who a REST request acts as: a signed-in user, found from its bearer token.
#include <cstdint>
#include <string>

#include "common/user_role.h"

namespace ring {

struct Principal {
  int64_t user_id = 0;
  std::string username;
  UserRole role = UserRole::kUser;

  bool admin() const { return role == UserRole::kAdmin; }
  // Admins manage everything; users what they own.
  bool Manages(const std::string& owner) const { return admin() || owner == username; }
};

}  // namespace ring
