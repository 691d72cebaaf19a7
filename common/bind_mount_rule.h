#pragma once
// Which host folders a trial's bind mount may not reach (docs/containers.md):
// a daemon's own folders (the agent's work and state folders, the master's
// data folder), whether the mount is one of them, below one, or above one
// (mounting "/" reaches them all). Pure; used by the master at submit and by
// the agent before a rank starts.
#include <optional>
#include <string>
#include <vector>

namespace ring {

// The first of `own_dirs` that `host_path` reaches, or nullopt. Both are
// compared lexically, normalised; empty entries of `own_dirs` are skipped.
std::optional<std::string> ReachedOwnDir(const std::string& host_path,
                                         const std::vector<std::string>& own_dirs);

}  // namespace ring
