#pragma once
// `ring cmd run|list|logs|kill`: tasks that are not trials. The functions
// take the task kind's route ("commands"), so shells and notebooks reuse them.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cli/cli_env.h"

namespace ring::cli {

struct TaskRunOptions {
  std::vector<std::string> argv;  // after --
  std::optional<int64_t> slots;
  std::optional<std::string> pool;
  std::optional<int64_t> priority;
  bool preemptible = false;
  std::string context_dir;  // shipped as the task's context (like a model folder)
  std::string config_file;  // Determined's command config YAML
  bool detach = false;      // print the id and return instead of following its logs
  uint64_t max_context_size = 64ull << 20;
};

// Creates the task (saying so on stderr): the master's answer.
Result<nlohmann::json> CreateTask(CliEnv& env, const std::string& plural, const TaskRunOptions& options);
// Creates the task; unless detached, follows its logs and returns its exit
// code once it ended (1 when it ended without one, e.g. killed or preempted).
int RunTask(CliEnv& env, const std::string& plural, const TaskRunOptions& options);
int ListTasks(CliEnv& env, const std::string& plural);
// Prints its lines; with `follow`, until it ended, then returns its exit code.
int TaskLogs(CliEnv& env, const std::string& plural, int64_t id, bool follow);
int KillTask(CliEnv& env, const std::string& plural, int64_t id);
// Creates a task, then (unless detached, when it prints the id) waits for
// `ready` as WaitForTask does and calls `open` with its id: `ring shell
// start` and `ring notebook start`.
int StartTask(CliEnv& env, const std::string& plural, const std::string& noun, const TaskRunOptions& options,
              const std::function<bool(const nlohmann::json&)>& ready,
              const std::function<int(int64_t)>& open);
// Polls task `id` until `ready` says yes of its answer (which it returns),
// saying on stderr why it waits whenever that changes; kConflict once it
// ended first. `noun` names it in messages ("Shell").
Result<nlohmann::json> WaitForTask(CliEnv& env, const std::string& plural, const std::string& noun,
                                   int64_t id, const std::function<bool(const nlohmann::json&)>& ready);

}  // namespace ring::cli
