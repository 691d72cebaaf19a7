#include "agent/run_as.h"

#include <grp.h>
#include <pwd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/capability.h>

namespace ring {
namespace {

// The passwd entry of `uid` or `name` (name wins when not empty); false when none.
bool LookUp(const std::string& name, uint32_t uid, passwd& entry, std::vector<char>& buffer) {
  buffer.assign(16384, '\0');
  passwd* found = nullptr;
  int rc = name.empty() ? ::getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found)
                        : ::getpwnam_r(name.c_str(), &entry, buffer.data(), buffer.size(), &found);
  return rc == 0 && found != nullptr;
}

// Supplementary groups of `user` as this host's group database lists them,
// starting with `gid`.
std::vector<uint32_t> GroupsOf(const std::string& user, uint32_t gid) {
  std::vector<gid_t> groups(64);
  int n = static_cast<int>(groups.size());
  if (::getgrouplist(user.c_str(), gid, groups.data(), &n) < 0) {
    groups.resize(static_cast<size_t>(n));
    if (::getgrouplist(user.c_str(), gid, groups.data(), &n) < 0) return {gid};
  }
  return std::vector<uint32_t>(groups.begin(), groups.begin() + n);
}

UnixAccount FromEntry(const passwd& entry) {
  UnixAccount account;
  account.uid = entry.pw_uid;
  account.gid = entry.pw_gid;
  account.user = entry.pw_name;
  account.home = entry.pw_dir && entry.pw_dir[0] == '/' ? entry.pw_dir : "/";
  if (entry.pw_shell && entry.pw_shell[0] == '/') account.shell = entry.pw_shell;
  account.groups = GroupsOf(account.user, account.gid);
  return account;
}

}  // namespace

bool CanSwitchUsers() {
  if (::geteuid() == 0) return true;
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (::syscall(SYS_capget, &header, data) != 0) return false;
  auto has = [&](int cap) { return (data[cap / 32].effective & (1u << (cap % 32))) != 0; };
  return has(CAP_SETUID) && has(CAP_SETGID);
}

Result<RunAsPolicy> ResolveRunAsPolicy(const AgentConfig& config, std::string& notice) {
  RunAsPolicy policy;
  policy.allow_root = config.allow_root_trials;
  passwd entry{};
  std::vector<char> buffer;
  const uid_t self = ::geteuid();
  if (LookUp("", self, entry, buffer)) {
    policy.agent = FromEntry(entry);
  } else {
    policy.agent.uid = self;
    policy.agent.gid = ::getegid();
    policy.agent.user = std::to_string(self);
    policy.agent.home = "/";
    policy.agent.groups = {policy.agent.gid};
  }
  notice.clear();
  if (config.single_user) {
    notice = "single_user is set";
    return policy;
  }
  if (!CanSwitchUsers()) {
    notice = "the agent can not switch users (it is not root and lacks CAP_SETUID and CAP_SETGID)";
    return policy;
  }
  if (config.unlinked_user.empty()) return InvalidArgument("unlinked_user must name an account");
  if (!LookUp(config.unlinked_user, 0, entry, buffer))
    return InvalidArgument("unlinked_user \"" + config.unlinked_user +
                           "\" is not an account on this host (create it, or name another)");
  if (entry.pw_uid == 0)
    return InvalidArgument("unlinked_user \"" + config.unlinked_user +
                           "\" is root: tasks of users with no linked account must run unprivileged");
  if (entry.pw_uid == self)
    return InvalidArgument("unlinked_user \"" + config.unlinked_user +
                           "\" is the agent's own account: tasks must not run as the agent");
  policy.unlinked = FromEntry(entry);
  policy.switch_users = true;
  return policy;
}

Result<UnixAccount> AccountFor(const RunAsPolicy& policy, const proto::Start& start) {
  if (!policy.switch_users) return policy.agent;
  if (!start.run_as) return policy.unlinked;
  const proto::RunAs& wanted = *start.run_as;
  if (wanted.uid < 0 || wanted.gid < 0 || wanted.uid > 0xfffffffe || wanted.gid > 0xfffffffe)
    return InvalidArgument("run_as names no valid uid and gid");
  if ((wanted.uid == 0 || wanted.gid == 0) && !policy.allow_root)
    return Status(ErrorCode::kPermissionDenied,
                  "refused to run as root (uid 0 / gid 0): the owner's linked Unix account is root and this "
                  "agent does not set allow_root_trials");
  UnixAccount account;
  account.uid = static_cast<uint32_t>(wanted.uid);
  account.gid = static_cast<uint32_t>(wanted.gid);
  account.user = wanted.user;
  account.home = "/";
  passwd entry{};
  std::vector<char> buffer;
  // Supplementary groups come from this host's database when the name is an
  // account here with that uid; otherwise only the primary group.
  if (!wanted.user.empty() && LookUp(wanted.user, 0, entry, buffer) && entry.pw_uid == account.uid) {
    account.groups = GroupsOf(wanted.user, account.gid);
  } else {
    account.groups = {account.gid};
  }
  if (LookUp("", account.uid, entry, buffer)) {
    if (account.user.empty()) account.user = entry.pw_name;
    if (entry.pw_dir && entry.pw_dir[0] == '/') account.home = entry.pw_dir;
    if (entry.pw_shell && entry.pw_shell[0] == '/') account.shell = entry.pw_shell;
  }
  if (account.user.empty()) account.user = std::to_string(account.uid);
  return account;
}

}  // namespace ring
