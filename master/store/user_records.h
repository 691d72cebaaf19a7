#pragma once
// Users, the Unix accounts their tasks run as, and sign-in sessions, as
// the store keeps them.
#include <cstdint>
#include <optional>
#include <string>

#include "common/user_role.h"

namespace ring {

// The Unix account a user's tasks run as on agents that switch users.
// Never root: uid and gid are 1..4294967294.
struct UserUnixAccount {
  int64_t uid = 0;
  int64_t gid = 0;
  std::string user;   // account name; empty when linked by number only
  std::string group;  // group name; empty when linked by number only
  bool operator==(const UserUnixAccount&) const = default;
};

// An account. Usernames never change: experiments record theirs as owner.
struct UserRecord {
  int64_t id = 0;
  std::string username;
  std::string password_hash;  // Argon2id, libsodium's crypto_pwhash_str format
  UserRole role = UserRole::kUser;
  bool active = true;                           // an inactive user cannot sign in
  std::string created_at;                       // set by the store
  std::optional<UserUnixAccount> unix_account;  // set by SetUserUnixAccount; absent: not linked
};

// A signed-in session: the SHA-256 of its bearer token, never the token.
struct SessionRecord {
  std::string token_hash;
  int64_t user_id = 0;
  std::string created_at;  // set by the store
  std::string expires_at;  // RFC 3339 UTC, as NowRfc3339 writes it
};

}  // namespace ring
