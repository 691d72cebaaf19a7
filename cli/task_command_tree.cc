#include "cli/task_command_tree.h"

#include "cli/notebook_commands.h"
#include "cli/shell_commands.h"

namespace ring::cli {
namespace {

// --slots, --pool and --priority of a task's start: `slots_help` says what
// 0 slots means for it.
void AddPlacementFlags(CLI::App* cmd, TaskArgs& a, const char* slots_help) {
  cmd->add_option("--slots", a.slots, slots_help)->check(CLI::NonNegativeNumber);
  cmd->add_option("--pool", a.pool, "Resource pool");
  cmd->add_option("--priority", a.priority, "Priority 1..99, lower runs first")->check(CLI::Range(1, 99));
}

// The flags given, into the options a task is created with.
void ApplyPlacementFlags(TaskArgs& a) {
  if (a.slots >= 0) a.run.slots = a.slots;
  if (a.priority >= 0) a.run.priority = a.priority;
  if (!a.pool.empty()) a.run.pool = a.pool;
}

void AddIdArg(CLI::App* cmd, TaskArgs& a, const char* what) {
  cmd->add_option("ID", a.id, what)->required()->check(CLI::PositiveNumber);
}

void AddCommands(CLI::App& app, TaskArgs& a, std::function<int(CliEnv&)>& action) {
  auto* cmd = app.add_subcommand("cmd", "Run commands on the cluster, follow their logs, kill them");
  cmd->alias("command");
  cmd->require_subcommand(1);
  auto* run = cmd->add_subcommand(
      "run", "Run COMMAND ARGS... (after --) on the cluster; follows its logs and exits with its exit code");
  AddPlacementFlags(run, a, "Slots it holds (0: a CPU-only helper, where the pool allows it)");
  run->add_option("--context", a.run.context_dir, "A folder shipped with it and unpacked where it runs");
  run->add_option("--config-file", a.run.config_file,
                  "Determined's command config (YAML); the flags win over its keys");
  run->add_flag("--preemptible", a.run.preemptible,
                "Higher-priority work may stop it (it cannot checkpoint: it ends, PREEMPTED)");
  run->add_flag("-d,--detach", a.run.detach, "Print its id and return instead of following its logs");
  run->add_option("COMMAND", a.run.argv, "The command and its arguments, after --");
  run->callback([&] {
    ApplyPlacementFlags(a);
    action = [&](CliEnv& env) { return RunTask(env, "commands", a.run); };
  });
  auto* list = cmd->add_subcommand("list", "Your commands (an admin's: everyone's), newest first");
  list->callback([&] { action = [&](CliEnv& env) { return ListTasks(env, "commands"); }; });
  auto* logs = cmd->add_subcommand("logs", "Print a command's output");
  AddIdArg(logs, a, "Command id");
  logs->add_flag("-f,--follow", a.follow, "Keep printing until it ended, then exit with its exit code");
  logs->callback([&] { action = [&](CliEnv& env) { return TaskLogs(env, "commands", a.id, a.follow); }; });
  auto* kill = cmd->add_subcommand("kill", "Stop a command (its end cause is USER_KILL)");
  AddIdArg(kill, a, "Command id");
  kill->callback([&] { action = [&](CliEnv& env) { return KillTask(env, "commands", a.id); }; });
}

// A login shell on the cluster, in a terminal the master relays.
void AddShells(CLI::App& app, TaskArgs& a, std::function<int(CliEnv&)>& action) {
  auto* shell = app.add_subcommand("shell", "Start, open, list and kill shells on the cluster");
  shell->require_subcommand(1);
  auto* start = shell->add_subcommand(
      "start", "Start a shell with the given slots, wait until it runs and open it (Ctrl-] detaches)");
  AddPlacementFlags(start, a, "Slots it holds (0: none, where the pool allows it)");
  start->add_option("--context", a.run.context_dir, "A folder shipped with it; the shell starts in it");
  start->add_option("--config-file", a.run.config_file,
                    "Determined's command config (YAML); the flags win over its keys");
  start->add_flag("-d,--detach", a.run.detach, "Print its id and return instead of opening it");
  start->callback([&] {
    ApplyPlacementFlags(a);
    action = [&](CliEnv& env) { return StartShell(env, a.run); };
  });
  auto* open = shell->add_subcommand("open", "Attach this terminal to a running shell (Ctrl-] detaches)");
  AddIdArg(open, a, "Shell id");
  open->callback([&] { action = [&](CliEnv& env) { return OpenShell(env, a.id); }; });
  auto* list = shell->add_subcommand("list", "Your shells (an admin's: everyone's), newest first");
  list->callback([&] { action = [&](CliEnv& env) { return ListTasks(env, "shells"); }; });
  auto* kill = shell->add_subcommand("kill", "End a shell and free its slots");
  AddIdArg(kill, a, "Shell id");
  kill->callback([&] { action = [&](CliEnv& env) { return KillTask(env, "shells", a.id); }; });
}

// Jupyter on the cluster, through the master's task proxy.
void AddNotebooks(CLI::App& app, TaskArgs& a, std::function<int(CliEnv&)>& action) {
  auto* notebook =
      app.add_subcommand("notebook", "Start, open, list and kill Jupyter notebooks on the cluster");
  notebook->require_subcommand(1);
  auto* start = notebook->add_subcommand(
      "start", "Start Jupyter with the given slots, wait until it answers and print the link that opens it");
  AddPlacementFlags(start, a, "Slots it holds (0: none, where the pool allows it)");
  start->add_option("--context", a.run.context_dir, "A folder shipped with it; Jupyter shows its files");
  start->add_option("--config-file", a.run.config_file,
                    "Determined's notebook config (YAML: idle_timeout, notebook_idle_type, ...)");
  start->add_flag("-d,--detach", a.run.detach, "Print its id and return instead of waiting for it");
  start->callback([&] {
    ApplyPlacementFlags(a);
    action = [&](CliEnv& env) { return StartNotebook(env, a.run); };
  });
  auto* open =
      notebook->add_subcommand("open", "Print a one-time link that opens a running notebook in a browser");
  AddIdArg(open, a, "Notebook id");
  open->callback([&] { action = [&](CliEnv& env) { return OpenNotebook(env, a.id); }; });
  auto* list = notebook->add_subcommand("list", "Your notebooks (an admin's: everyone's), newest first");
  list->callback([&] { action = [&](CliEnv& env) { return ListTasks(env, "notebooks"); }; });
  auto* logs = notebook->add_subcommand("logs", "Print a notebook's output (Jupyter's log)");
  AddIdArg(logs, a, "Notebook id");
  logs->add_flag("-f,--follow", a.follow, "Keep printing until it ended");
  logs->callback([&] { action = [&](CliEnv& env) { return TaskLogs(env, "notebooks", a.id, a.follow); }; });
  auto* kill = notebook->add_subcommand("kill", "End a notebook and free its slots");
  AddIdArg(kill, a, "Notebook id");
  kill->callback([&] { action = [&](CliEnv& env) { return KillTask(env, "notebooks", a.id); }; });
}

}  // namespace

void AddTaskCommands(CLI::App& app, TaskArgs& a, std::function<int(CliEnv&)>& action) {
  AddCommands(app, a, action);
  AddShells(app, a, action);
  AddNotebooks(app, a, action);
}

}  // namespace ring::cli
