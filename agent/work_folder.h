#pragma once
// The agent's work folder and each task's folder in it. The root is the
// agent's own and nobody else may write to it; a task's folder is made by
// the agent (mode 0700), filled with the model definition, then handed to
// the task's account without following links. Removal never follows links
// either. Blocking: called on worker threads (PrepareWorkRoot at start).
#include <cstdint>
#include <string>

#include "common/status.h"

namespace ring {

// Makes `root` when missing (mode 0711: tasks running as other accounts can
// enter their own folders in it but not list it) and refuses one owned by
// another user or writable by its group or others. With `others_enter`
// (tasks run as other accounts) every folder above it must let others pass
// (o+x), or no task could reach its folder.
Status PrepareWorkRoot(const std::string& root, bool others_enter);

// Makes `dir` afresh (an old one is removed first), mode 0700, the agent's.
Status MakeWorkDir(const std::string& dir);

// Gives `dir` and everything in it to uid:gid; links are changed themselves,
// never followed.
Status ChownTree(const std::string& dir, uint32_t uid, uint32_t gid);

// Removes `dir` and everything in it without following links (a task may
// have left links to anywhere).
Status RemoveTree(const std::string& dir);

}  // namespace ring
