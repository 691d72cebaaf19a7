#pragma once
// Who a task runs as on this host. An agent that can switch users (root, or
// CAP_SETUID and CAP_SETGID) runs each task as its owner's Unix account
// (proto::Start::run_as), or as the configured unprivileged account when the
// owner has none; otherwise (or with single_user) it runs tasks as itself.
// The policy is resolved once at start; AccountFor runs on worker threads
// (it reads the host's account database) and is thread-safe.
#include <cstdint>
#include <string>
#include <vector>

#include "agent/agent_config.h"
#include "common/agent_protocol.h"
#include "common/status.h"

namespace ring {

struct UnixAccount {
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::vector<uint32_t> groups;  // supplementary groups, the primary one included
  std::string user;              // USER / LOGNAME
  std::string home;              // HOME: from this host's account database, "/" when it has none
  std::string shell;             // SHELL: its login shell there; empty when it has none
};

struct RunAsPolicy {
  bool switch_users = false;  // false: single-user mode, tasks run as the agent
  bool allow_root = false;    // allow_root_trials: a run_as of uid 0 is accepted
  UnixAccount unlinked;       // where switch_users: tasks of owners with no linked account
  UnixAccount agent;          // the agent's own account (single-user mode)
};

// True when this process may switch users: effective uid 0, or CAP_SETUID
// and CAP_SETGID effective.
bool CanSwitchUsers();

// The policy for `config` on this host. Refuses an unlinked_user that does
// not exist here, is root, or is the agent's own account. `notice` says why
// tasks run as the agent when they do (empty otherwise).
Result<RunAsPolicy> ResolveRunAsPolicy(const AgentConfig& config, std::string& notice);

// The account a task runs as. Refused (with a message for the task's exit)
// when it would be root and the policy does not allow it.
Result<UnixAccount> AccountFor(const RunAsPolicy& policy, const proto::Start& start);

}  // namespace ring
