#pragma once
// `ring user link-unix`: the Unix account to link, from numbers or from
// names looked up in this host's account database (getpwnam, getgrnam).
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace ring::cli {

struct UnixLinkOptions {
  std::string username;  // the Ringmaster user
  std::optional<int64_t> uid;
  std::optional<int64_t> gid;
  std::string unix_user;   // --unix-user: uid (and gid, unless given) from getpwnam
  std::string unix_group;  // --unix-group: gid from getgrnam
};

// The PATCH /users/{id} "unix" object: {uid, gid, user, group}. A number and
// a name for the same id are refused; so is a name this host does not know
// and a uid without a gid or group.
Result<nlohmann::json> ResolveUnixAccount(const UnixLinkOptions& o);

// "alice 1001:1001 (team)", "1001:1001", or "-" for null.
std::string DescribeUnixAccount(const nlohmann::json& unix);

}  // namespace ring::cli
