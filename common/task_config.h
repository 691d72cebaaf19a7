#pragma once
// The settings of a task that is not a trial (a command, a shell, a
// notebook): Determined's command config file (resources, environment,
// bind_mounts, idle_timeout, notebook_idle_type, description, entrypoint) with the
// command line's flags applied over it. Parsed by ParseTaskConfig; the
// master keeps the result with the task (TaskRecord::spec).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/experiment_config.h"
#include "common/notebook_idle_type.h"
#include "common/status.h"

namespace ring {

struct TaskSpec {
  std::string description;
  // What runs: argv exec'd without a shell. A config's string entrypoint
  // becomes {"/bin/sh", "-c", text}.
  std::vector<std::string> argv;
  int64_t slots = 1;  // 0: a CPU-only helper, on pools whose zero_slot_tasks allows it
  std::string resource_pool = "default";
  int64_t priority = 42;  // 1..99, lower runs first (priority pools)
  double weight = 1;      // fair-share weight (> 0)
  // May a waiting request stop it? A task cannot checkpoint: a preempted one
  // ends (EndCause PREEMPTED) and is not restarted.
  bool preemptible = false;
  EnvironmentConfig environment;       // variables (also per slot kind), image
  std::vector<BindMount> bind_mounts;  // only with environment.image
  // Seconds without activity after which an interactive task (shell,
  // notebook) is ended; kept but not enforced for commands.
  std::optional<int64_t> idle_timeout_s;
  // What makes a notebook idle (Determined's notebook_idle_type); notebooks only.
  NotebookIdleType notebook_idle_type = NotebookIdleType::kKernelsOrTerminals;
  bool has_context = false;  // a context folder (tar.gz) was sent with it
};

// master.yaml `interactive: {idle_timeout, max_idle_timeout, ...}`: the idle
// timeout of shells and notebooks whose config sets none, and the longest
// one a config may set (seconds; nullopt: none).
struct IdleTimeoutLimits {
  std::optional<int64_t> default_s;
  std::optional<int64_t> max_s;
};

// What `ring cmd run` (or POST /commands) sets over the config file; each
// given flag wins over the file's key.
struct TaskFlags {
  std::optional<int64_t> slots;
  std::optional<std::string> resource_pool;
  std::optional<int64_t> priority;
  std::optional<bool> preemptible;
  std::optional<std::string> description;
  std::vector<std::string> argv;  // empty: the file's entrypoint
};

// Determined's durations as Go writes them ("30m", "1h", "45s"; a bare
// integer is seconds); nullopt for anything else.
std::optional<int64_t> DurationSeconds(const std::string& text);

// Parses a task config (YAML text; empty text is an empty config). Every
// problem is reported, one line each, as "<file>:<line>: <key> ...", with
// ErrorCode::kInvalidConfig; an unknown key is named with its line.
Result<TaskSpec> ParseTaskConfig(const std::string& yaml_text, const std::string& file_name = "config.yaml");

// The config with the flags applied, then checked as a whole: a command to
// run, slots >= 0, priority 1..99 (kInvalidArgument naming the field).
Result<TaskSpec> ApplyTaskFlags(TaskSpec spec, const TaskFlags& flags);

}  // namespace ring
