#include "cli/unix_account.h"

#include <grp.h>
#include <pwd.h>

#include <vector>

#include "cli/format.h"

namespace ring::cli {

Result<nlohmann::json> ResolveUnixAccount(const UnixLinkOptions& o) {
  if (o.uid && !o.unix_user.empty()) return InvalidArgument("give --uid or --unix-user, not both");
  if (o.gid && !o.unix_group.empty()) return InvalidArgument("give --gid or --unix-group, not both");
  if (!o.uid && o.unix_user.empty())
    return InvalidArgument("name the Unix account: --uid N or --unix-user NAME");
  nlohmann::json unix = {{"user", ""}, {"group", ""}};
  std::optional<int64_t> gid = o.gid;
  if (!o.unix_user.empty()) {
    std::vector<char> buffer(16384);
    passwd entry{};
    passwd* found = nullptr;
    if (::getpwnam_r(o.unix_user.c_str(), &entry, buffer.data(), buffer.size(), &found) != 0 || !found)
      return NotFound("--unix-user: this host has no Unix account named '" + o.unix_user +
                      "'; create it (useradd) or link by number with --uid and --gid");
    unix["uid"] = static_cast<int64_t>(found->pw_uid);
    unix["user"] = o.unix_user;
    if (!gid && o.unix_group.empty()) gid = static_cast<int64_t>(found->pw_gid);  // the primary group
  } else {
    unix["uid"] = *o.uid;
  }
  if (!o.unix_group.empty()) {
    std::vector<char> buffer(65536);
    group entry{};
    group* found = nullptr;
    if (::getgrnam_r(o.unix_group.c_str(), &entry, buffer.data(), buffer.size(), &found) != 0 || !found)
      return NotFound("--unix-group: this host has no Unix group named '" + o.unix_group + "'");
    gid = static_cast<int64_t>(found->gr_gid);
    unix["group"] = o.unix_group;
  }
  if (!gid) return InvalidArgument("give the group too: --gid N or --unix-group NAME");
  unix["gid"] = *gid;
  return unix;
}

std::string DescribeUnixAccount(const nlohmann::json& unix) {
  if (!unix.is_object()) return "-";
  std::string ids = Field(unix, "uid") + ":" + Field(unix, "gid");
  const std::string user = GetString(unix, "user");
  const std::string group = GetString(unix, "group");
  std::string out = user.empty() ? ids : user + " " + ids;
  if (!group.empty()) out += " (" + group + ")";
  return out;
}

}  // namespace ring::cli
