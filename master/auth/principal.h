#pragma once
// Who a REST request acts as: a signed-in user, found from its bearer token.
#include <cstdint>
#include <string>

namespace ring {

struct Principal {
  int64_t user_id = 0;
  std::string username;
  std::string role;  // "admin" or "user"

  bool admin() const { return role == "admin"; }
  // Admins manage everything; users what they own.
  bool Manages(const std::string& owner) const { return admin() || owner == username; }
};

}  // namespace ring
