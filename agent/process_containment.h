#pragma once
// Keeps every process of a trial findable, so that all of them end when it
// ends, including those that left its process group (setsid, double fork).
// Each launch gets a cgroup of its own below the agent's: cgroup v2 (the
// unified hierarchy, /sys/fs/cgroup or /sys/fs/cgroup/unified in hybrid
// mode; killed with cgroup.kill, or pid by pid) or the v1 freezer (frozen,
// killed, thawed). Without either, only the process group is left, and the
// agent says so in its log. Thread-safe: the methods touch only the
// filesystem and the group named in each call.
#include <string>
#include <vector>

#include "common/status.h"

namespace ring {

enum class ContainmentKind { kCgroup2, kFreezer, kProcessGroup };
const char* ToString(ContainmentKind kind);
// "auto", "cgroup2", "freezer", "process_group"; false for anything else.
bool ParseContainment(const std::string& text, bool& is_auto, ContainmentKind& kind);

class ProcessContainment {
 public:
  // Process groups only.
  ProcessContainment() = default;
  // Finds the hierarchy to use for the agent `agent_id` and makes its folder
  // there (<agent's cgroup>/ringagent-<agent_id>.<pid>), removing the empty
  // groups that earlier runs of this agent left. `wanted` empty: the first that works of cgroup v2,
  // freezer; a kind given: only that one. Falls back to process groups when
  // none works; `why` then says what failed.
  static ProcessContainment Detect(const std::string& agent_id, const std::vector<ContainmentKind>& wanted,
                                   std::string& why);

  ContainmentKind kind() const { return kind_; }
  const std::string& root() const { return root_; }  // the agent's folder; empty for process groups

  // Makes the group `name` and returns an open descriptor (close-on-exec) of
  // the file a process writes "0" to in order to join it; -1 for process groups.
  Result<int> Create(const std::string& name) const;
  // The pids in group `name` (empty when it is gone).
  std::vector<int> Pids(const std::string& name) const;
  // Sends `signal` to every process in the group.
  void SignalAll(const std::string& name, int signal) const;
  // SIGKILLs every process in the group until none is left (bounded wait);
  // false when some survived.
  bool KillAll(const std::string& name) const;
  // Removes the (empty) group folder.
  void Remove(const std::string& name) const;
  // Removes the agent's folder when it is empty (at shutdown).
  void RemoveRoot() const;

 private:
  std::string Path(const std::string& name) const { return root_ + "/" + name; }

  ContainmentKind kind_ = ContainmentKind::kProcessGroup;
  std::string root_;
};

}  // namespace ring
