#include "cli/run_cli.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <optional>

#include <CLI/CLI.hpp>

#include "cli/agent_commands.h"
#include "cli/checkpoint_commands.h"
#include "cli/cli_env.h"
#include "cli/config_commands.h"
#include "cli/credentials.h"
#include "cli/experiment_commands.h"
#include "cli/experiment_info_commands.h"
#include "cli/experiment_wait.h"
#include "cli/format.h"
#include "cli/master_commands.h"
#include "cli/model_commands.h"
#include "cli/preview_commands.h"
#include "cli/proxy_commands.h"
#include "cli/scheduling_commands.h"
#include "cli/task_command_tree.h"
#include "cli/task_commands.h"
#include "cli/template_commands.h"
#include "cli/trial_commands.h"
#include "cli/user_commands.h"
#include "cli/webhook_commands.h"
#include "cli/workspace_commands.h"

namespace ring::cli {
namespace {

constexpr const char* kFooter =
    "Exit codes:\n"
    "  0  success\n"
    "  1  the master reported a failure, or the experiment did not end COMPLETED\n"
    "  2  usage error (bad arguments)\n"
    "  3  the master could not be reached\n"
    "Environment: RING_MASTER (master URL, like -m), RING_MAX_MODEL_SIZE (like --max-model-size),\n"
    "RING_TOKEN (a sign-in token, instead of the one `ring user login` keeps in\n"
    "${XDG_CONFIG_HOME:-~/.config}/ring/tokens.json).";

// The values every command's options are parsed into.
struct Args {
  std::string master = "http://127.0.0.1:8080";
  std::string ca_file;  // --ca-file / RING_CA_FILE: trusted for an https master besides the system's CAs
  bool json = false;
  int64_t id = 0;
  CreateOptions create;
  std::string max_model_size;
  std::string uuid;
  std::string dir;
  int64_t limit = 100;
  int64_t offset = 0;
  double timeout_s = 0;
  bool follow = false;
  int rank = -1;
  std::string config;
  std::optional<uint64_t> seed;
  std::string setting;
  std::string value;
  std::string agent_id;
  bool drain = false;
  bool print_token = false;  // ring master rotate-cluster-token --print
  UserOptions user;
  UnixLinkOptions unix_link;
  ExperimentListOptions list;
  std::string label;
  int64_t length = 0;     // ring trial continue --length
  bool in_place = false;  // ring trial continue --in-place
  bool yes = false;
};

std::chrono::milliseconds PollInterval() {
  if (const char* text = std::getenv("RING_CLI_POLL_MS")) {
    long ms = std::strtol(text, nullptr, 10);
    if (ms > 0) return std::chrono::milliseconds(ms);
  }
  return std::chrono::milliseconds(1000);
}

}  // namespace

int RunCli(std::vector<std::string> args, std::ostream& out, std::ostream& err) {
  CLI::App app{"ring: the Ringmaster command-line client", "ring"};
  app.footer(kFooter);
  app.fallthrough();  // global options may follow the subcommand
  app.require_subcommand(1);
  Args a;
  if (const char* env_size = std::getenv("RING_MAX_MODEL_SIZE")) a.max_model_size = env_size;
  app.add_option("-m,--master", a.master, "Master URL")->envname("RING_MASTER")->capture_default_str();
  app.add_flag("--json", a.json, "Print raw JSON for scripts");
  app.add_option("--ca-file", a.ca_file,
                 "CA certificate(s) (PEM) to trust for an https:// master, besides the system's CAs")
      ->envname("RING_CA_FILE");

  // What to run once parsing succeeded; set by the chosen leaf command.
  std::function<int(CliEnv&)> action;
  auto id_arg = [&](CLI::App* cmd, const char* what) {
    cmd->add_option("ID", a.id, what)->required()->check(CLI::PositiveNumber);
  };

  auto* experiment = app.add_subcommand("experiment", "Create, inspect and control experiments");
  experiment->require_subcommand(1);
  experiment->alias("e");

  auto* create = experiment->add_subcommand("create", "Submit an experiment: CONFIG (YAML) and MODEL_DIR");
  create->add_option("CONFIG", a.create.config_path, "Experiment config (YAML)")
      ->required()
      ->check(CLI::ExistingFile);
  create->add_option("MODEL_DIR", a.create.model_dir, "Model directory to upload (.ringignore honoured)")
      ->required()
      ->check(CLI::ExistingDirectory);
  create->add_flag("--follow,-f", a.create.follow,
                   "Follow the experiment until it ends (exit 0 only if COMPLETED)");
  create->add_flag("--paused", a.create.paused, "Create it paused (not activated)");
  create->add_option("--launch", a.create.launch,
                     "per-node: one process per agent for all its slots (a launcher such as "
                     "determined.launch starts the workers); per-slot: one per slot. Overrides "
                     "resources.launch and the pool's default (docs/distributed.md)");
  create
      ->add_option("--config", a.create.overrides,
                   "Override a key of CONFIG: key=value, nested keys with dots (searcher.max_trials=4), "
                   "the value read as YAML; repeatable")
      ->expected(1)
      ->take_all();
  create->add_flag("--test", a.create.test,
                   "Run one short trial of CONFIG (searcher single, default hyperparameters, max_length 1 "
                   "batch, no restarts) to check the setup; stop it at its first validation");
  create->add_option("--template", a.create.template_name,
                     "A stored template (ring template list) the config is laid over; the config's keys win");
  create->add_option("--max-model-size", a.max_model_size,
                     "Largest model directory to upload, e.g. 64M (default 64 MiB)");
  create->add_option("--project", a.create.project,
                     "Project id or WORKSPACE/PROJECT (default: Uncategorized); its workspace's default pool "
                     "is used when the config names none");
  create->callback([&] { action = [&](CliEnv& env) { return CreateExperiment(env, a.create); }; });

  auto* list = experiment->add_subcommand("list", "List experiments");
  list->add_option("--limit", a.list.limit, "Page size")->capture_default_str()->check(CLI::Range(1, 10000));
  list->add_option("--offset", a.list.offset, "Page start")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  list->add_option("--state", a.list.states, "Only these states (ACTIVE, PAUSED, COMPLETED, CANCELED, ERROR)")
      ->delimiter(',');
  list->add_option("--owner", a.list.owner, "Only this user's");
  list->add_option("--label", a.list.label, "Only those with this label");
  list->add_option("--name", a.list.name, "Only those whose name holds this text (any case)");
  list->add_option("--archived", a.list.archived, "true: only archived ones; false: only the others")
      ->check(CLI::IsMember({"true", "false"}));
  list->add_option("--sort", a.list.sort, "Sort by a column")
      ->check(CLI::IsMember(
          {"id", "name", "state", "owner", "progress", "best_validation", "num_trials", "created_at"}));
  list->add_flag("--desc", a.list.descending, "Sort in descending order");
  list->add_option("--project", a.list.project, "Only those in this project (id or WORKSPACE/PROJECT)");
  list->add_option("--workspace", a.list.workspace, "Only those in this workspace (id or name)");
  list->callback([&] { action = [&](CliEnv& env) { return ListExperiments(env, a.list); }; });

  auto* describe =
      experiment->add_subcommand("describe", "Show an experiment, its trials and final validation metrics");
  id_arg(describe, "Experiment id");
  describe->add_flag("--follow,-f", a.follow, "Follow it until it ends, then describe it");
  describe->callback([&] {
    action = [&](CliEnv& env) {
      int code = kExitOk;
      if (a.follow) code = WaitForExperiment(env, a.id, {std::nullopt, true, false});
      if (code == kExitUnreachable) return code;
      int described = DescribeExperiment(env, a.id);
      return described != kExitOk ? described : code;
    };
  });

  auto* wait = experiment->add_subcommand("wait", "Wait until an experiment ends; exit 0 only if COMPLETED");
  id_arg(wait, "Experiment id");
  wait->add_option("--timeout", a.timeout_s, "Give up after this many seconds (exit 1)")
      ->check(CLI::PositiveNumber);
  wait->callback([&] {
    action = [&](CliEnv& env) {
      WaitOptions w;
      if (a.timeout_s > 0) w.timeout = std::chrono::seconds(static_cast<int64_t>(std::ceil(a.timeout_s)));
      return WaitForExperiment(env, a.id, w);
    };
  });

  for (const char* verb : {"pause", "activate", "kill", "archive", "unarchive"}) {
    auto* cmd = experiment->add_subcommand(verb, std::string("Ask the master to ") + verb + " an experiment");
    id_arg(cmd, "Experiment id");
    std::string v = verb;
    cmd->callback([&, v] { action = [&, v](CliEnv& env) { return ExperimentAction(env, a.id, v); }; });
  }

  auto* fork = experiment->add_subcommand(
      "fork", "A new experiment from an existing one's model folder and config, with changes");
  id_arg(fork, "Experiment id");
  fork->add_option("--config", a.create.overrides,
                   "KEY=VALUE over the config (repeatable), e.g. "
                   "hyperparameters.learning_rate.val=0.1")
      ->expected(1)
      ->take_all();
  fork->add_option("--config-file", a.create.config_path, "Use this config instead of the parent's");
  fork->add_option("--template", a.create.template_name, "A stored template the config is laid over");
  fork->add_flag("--follow", a.create.follow, "Follow it until it ends");
  fork->add_flag("--paused", a.create.paused, "Create it paused");
  fork->callback([&] { action = [&](CliEnv& env) { return ForkExperiment(env, a.id, a.create); }; });

  auto* del = experiment->add_subcommand(
      "delete", "Delete an experiment that has ended, with its trials, metrics, logs and checkpoint files");
  id_arg(del, "Experiment id");
  del->add_flag("-y,--yes", a.yes, "Do not ask first");
  del->callback([&] { action = [&](CliEnv& env) { return DeleteExperiment(env, a.id, a.yes); }; });

  auto* model_def = experiment->add_subcommand(
      "download-model-def", "Download the model definition an experiment was submitted with into DIR");
  model_def->alias("download-model");
  id_arg(model_def, "Experiment id");
  model_def->add_option("DIR", a.dir, "Folder to write the files into (created if missing)")->required();
  model_def->callback(
      [&] { action = [&](CliEnv& env) { return DownloadModelDefinition(env, a.id, a.dir); }; });

  auto* set = experiment->add_subcommand(
      "set",
      "Change an experiment's name or description, its priority, weight or max-slots live, or how long it "
      "keeps checkpoints and logs");
  set->add_option("SETTING", a.setting,
                  "name, description, priority (1-99, lower first), weight (> 0), max-slots (N or none), "
                  "save-experiment-best, save-trial-best, save-trial-latest (N >= 0; its checkpoints are "
                  "collected at once) or log-retention-days (N, forever or default)")
      ->required()
      ->check(CLI::IsMember({"name", "description", "priority", "weight", "max-slots", "save-experiment-best",
                             "save-trial-best", "save-trial-latest", "log-retention-days"}));
  id_arg(set, "Experiment id");
  set->add_option("VALUE", a.value, "The new value")->required();
  set->callback([&] {
    action = [&](CliEnv& env) {
      if (a.setting == "name" || a.setting == "description")
        return SetExperimentInfo(env, a.id, a.setting, a.value);
      if (a.setting.starts_with("save-") || a.setting == "log-retention-days")
        return SetExperimentRetention(env, a.id, a.setting, a.value);
      return SetExperimentResource(env, a.id, a.setting, a.value);
    };
  });
  auto* label = experiment->add_subcommand("label", "Add or remove an experiment's labels");
  label->require_subcommand(1);
  for (const bool add : {true, false}) {
    auto* edit = label->add_subcommand(add ? "add" : "remove", add ? "Add a label" : "Remove a label");
    id_arg(edit, "Experiment id");
    edit->add_option("LABEL", a.label, "The label")->required();
    edit->callback([&, add] {
      action = [&, add](CliEnv& env) { return EditExperimentLabel(env, a.id, add, a.label); };
    });
  }

  auto* job = app.add_subcommand("job", "The job queue of every pool");
  job->require_subcommand(1);
  auto* job_list =
      job->add_subcommand("list", "Pending and running allocations in scheduling order, and why each waits");
  job_list->callback([&] { action = [&](CliEnv& env) { return ListJobs(env); }; });

  TaskArgs task_args;
  AddTaskCommands(app, task_args, action);

  ModelArgs model_args;
  AddModelCommands(app, model_args, action);
  WorkspaceArgs workspace_args;
  AddWorkspaceCommands(app, *experiment, workspace_args, action);

  // Templates: named partial configs experiments start from.
  TemplateArgs template_args;
  AddTemplateCommands(app, template_args, action);

  WebhookArgs webhook_args;
  AddWebhookCommands(app, webhook_args, action);

  auto* pool = app.add_subcommand("pool", "The resource pools");
  pool->require_subcommand(1);
  auto* pool_list = pool->add_subcommand(
      "list", "Each pool: what runs its work, whose account runs its tasks, slots and jobs");
  pool_list->callback([&] { action = [&](CliEnv& env) { return ListPools(env); }; });

  auto* trial = app.add_subcommand("trial", "Inspect trials");
  trial->require_subcommand(1);
  trial->alias("t");
  auto* trial_describe = trial->add_subcommand("describe", "Show a trial and its metrics");
  id_arg(trial_describe, "Trial id");
  trial_describe->callback([&] { action = [&](CliEnv& env) { return DescribeTrial(env, a.id); }; });
  auto* logs = trial->add_subcommand("logs", "Print a trial's logs");
  id_arg(logs, "Trial id");
  logs->add_flag("-f,--follow", a.follow, "Keep printing new lines until the trial ended");
  logs->add_option("--rank", a.rank, "Only this rank's lines")->check(CLI::NonNegativeNumber);
  logs->callback([&] {
    action = [&](CliEnv& env) {
      LogsOptions o;
      o.follow = a.follow;
      if (a.rank >= 0) o.rank = a.rank;
      return TrialLogs(env, a.id, o);
    };
  });

  auto* trial_kill = trial->add_subcommand("kill", "Kill one trial; its experiment goes on with the others");
  id_arg(trial_kill, "Trial id");
  trial_kill->callback([&] { action = [&](CliEnv& env) { return KillTrial(env, a.id); }; });
  auto* trial_continue = trial->add_subcommand(
      "continue", "Train a trial further from its latest checkpoint, as a new single-trial experiment");
  id_arg(trial_continue, "Trial id");
  trial_continue
      ->add_option("--length", a.length,
                   "The new total length in its searcher's units (max_length's batches, records or "
                   "epochs; time_metric's under the trial-driven contract)")
      ->required()
      ->check(CLI::PositiveNumber);
  trial_continue->add_flag("--follow,-f", a.create.follow, "Follow the new experiment until it ends");
  auto* paused = trial_continue->add_flag("--paused", a.create.paused, "Create it paused");
  trial_continue
      ->add_flag("--in-place", a.in_place,
                 "Train it on in its own ended single-trial experiment instead (its owner or an admin)")
      ->excludes(paused);
  trial_continue->callback([&] {
    action = [&](CliEnv& env) {
      return ContinueTrial(env, a.id, a.length, a.create.follow, a.create.paused, a.in_place);
    };
  });

  auto* task = app.add_subcommand("task", "Tasks: trials and the services they run");
  task->require_subcommand(1);
  auto* proxy_link = task->add_subcommand(
      "proxy-link", "Print a one-time link that opens a task's service through the master (owner or admin)");
  id_arg(proxy_link, "Task id");
  proxy_link->callback([&] { action = [&](CliEnv& env) { return ProxyLink(env, a.id); }; });

  auto* agent = app.add_subcommand("agent", "Inspect, disable, enable and remove agents");
  agent->require_subcommand(1);
  auto* agent_list = agent->add_subcommand("list", "List agents and their slots");
  agent_list->callback([&] { action = [&](CliEnv& env) { return ListAgents(env); }; });
  auto* disable = agent->add_subcommand("disable", "Place no new work on an agent");
  disable->add_option("ID", a.agent_id, "Agent id")->required();
  disable->add_flag("--drain", a.drain, "Let its running work finish instead of preempting it");
  disable->callback(
      [&] { action = [&](CliEnv& env) { return SetAgentEnabled(env, a.agent_id, false, a.drain); }; });
  auto* enable = agent->add_subcommand("enable", "Place work on a disabled agent again");
  enable->add_option("ID", a.agent_id, "Agent id")->required();
  enable->callback(
      [&] { action = [&](CliEnv& env) { return SetAgentEnabled(env, a.agent_id, true, false); }; });
  auto* remove = agent->add_subcommand(
      "remove", "Revoke an agent (admins): close its connection, end its work; it must enrol again");
  remove->add_option("ID", a.agent_id, "Agent id")->required();
  remove->callback([&] { action = [&](CliEnv& env) { return RemoveAgent(env, a.agent_id); }; });
  auto* allow_slots = agent->add_subcommand(
      "allow-slots", "Let an agent offer up to N slots, beyond what it enrolled with (admins)");
  allow_slots->add_option("ID", a.agent_id, "Agent id")->required();
  allow_slots->add_option("N", a.id, "Most slots its hellos may offer")
      ->required()
      ->check(CLI::NonNegativeNumber);
  allow_slots->callback(
      [&] { action = [&](CliEnv& env) { return AllowAgentSlots(env, a.agent_id, a.id); }; });

  auto* checkpoint = app.add_subcommand("checkpoint", "List and download checkpoints");
  checkpoint->require_subcommand(1);
  auto* checkpoint_list = checkpoint->add_subcommand("list", "List an experiment's checkpoints");
  id_arg(checkpoint_list, "Experiment id");
  checkpoint_list->callback([&] { action = [&](CliEnv& env) { return ListCheckpoints(env, a.id); }; });
  auto* download = checkpoint->add_subcommand("download", "Download a checkpoint's files into DIR");
  download->add_option("UUID", a.uuid, "Checkpoint uuid")->required();
  download->add_option("DIR", a.dir, "Folder to write the files into (created if missing)")->required();
  download->callback([&] { action = [&](CliEnv& env) { return DownloadCheckpoint(env, a.uuid, a.dir); }; });

  auto* master_cmd = app.add_subcommand("master", "The master itself");
  master_cmd->require_subcommand(1);
  auto* master_info = master_cmd->add_subcommand("info", "Version, uptime, database size and counts");
  master_info->callback([&] { action = [&](CliEnv& env) { return MasterInfo(env); }; });
  auto* backup =
      master_cmd->add_subcommand("backup", "Copy the master's database, online, into FILE (admins)");
  backup->add_option("FILE", a.dir, "The new file (must not exist)")->required();
  backup->callback([&] { action = [&](CliEnv& env) { return MasterBackup(env, a.dir); }; });
  auto* cleanup = master_cmd->add_subcommand(
      "cleanup", "Run a retention pass now: thin old metrics, delete expired logs, give space back (admins)");
  cleanup->callback([&] { action = [&](CliEnv& env) { return MasterCleanup(env); }; });
  auto* rotate = master_cmd->add_subcommand(
      "rotate-cluster-token",
      "Write a new cluster token (admins): enrolled agents stay connected, new agents need the new one");
  rotate->add_flag("--print", a.print_token,
                   "Print the new token alone (for scripts) instead of where it is");
  rotate->callback([&] { action = [&](CliEnv& env) { return RotateClusterToken(env, a.print_token); }; });

  auto* user = app.add_subcommand("user", "Sign in and out, and manage users");
  user->require_subcommand(1);
  auto* login = user->add_subcommand("login", "Sign in; the token is kept for this master (0600 file)");
  login->add_option("USERNAME", a.user.username, "Who signs in (default $USER)");
  login->add_option("--password-file", a.user.password_file, "Read the password from this file");
  login->callback([&] { action = [&](CliEnv& env) { return Login(env, a.user); }; });
  auto* logout = user->add_subcommand("logout", "Sign out: end the session and forget its token");
  logout->callback([&] { action = [&](CliEnv& env) { return Logout(env); }; });
  auto* whoami = user->add_subcommand("whoami", "Show who is signed in");
  whoami->callback([&] { action = [&](CliEnv& env) { return WhoAmI(env); }; });
  auto* user_create = user->add_subcommand("create", "Create a user (admins only)");
  user_create->add_option("USERNAME", a.user.username, "The new user's name")->required();
  user_create->add_flag("--admin", a.user.admin, "Make the user an admin");
  user_create->add_option("--password-file", a.user.password_file, "Read the password from this file");
  user_create->callback([&] { action = [&](CliEnv& env) { return CreateUser(env, a.user); }; });
  auto* user_list = user->add_subcommand("list", "List users (admins only)");
  user_list->callback([&] { action = [&](CliEnv& env) { return ListUsers(env); }; });
  auto* passwd = user->add_subcommand("change-password", "Change your password, or another user's (admins)");
  passwd->add_option("USERNAME", a.user.username, "Whose (default: yours)");
  passwd->add_option("--password-file", a.user.password_file, "Read the new password from this file");
  passwd->add_option("--current-password-file", a.user.current_password_file,
                     "Read your current password from this file (needed to change your own)");
  passwd->callback([&] { action = [&](CliEnv& env) { return ChangePassword(env, a.user); }; });
  for (const char* verb : {"activate", "deactivate"}) {
    auto* cmd = user->add_subcommand(
        verb, std::string(verb == std::string("activate") ? "Let a user sign in again (admins only)"
                                                          : "Stop a user from signing in (admins only)"));
    cmd->add_option("USERNAME", a.user.username, "The user")->required();
    const bool active = verb == std::string("activate");
    cmd->callback([&, active] {
      action = [&, active](CliEnv& env) { return SetUserActive(env, a.user.username, active); };
    });
  }

  auto* link = user->add_subcommand(
      "link-unix",
      "Run a user's tasks as a Unix account on agents that switch users (admins only); by number "
      "(--uid, --gid) or by name, looked up on this host (--unix-user, --unix-group)");
  link->add_option("USERNAME", a.unix_link.username, "The Ringmaster user")->required();
  auto* uid = link->add_option("--uid", a.unix_link.uid, "The account's uid (1 to 4294967294; never root)");
  auto* gid = link->add_option("--gid", a.unix_link.gid, "The group's gid (1 to 4294967294)");
  link->add_option("--unix-user", a.unix_link.unix_user,
                   "The account's name: its uid, and its primary group unless --gid or --unix-group")
      ->excludes(uid);
  link->add_option("--unix-group", a.unix_link.unix_group, "The group's name: its gid")->excludes(gid);
  link->callback([&] { action = [&](CliEnv& env) { return LinkUnix(env, a.unix_link); }; });
  auto* unlink = user->add_subcommand(
      "unlink-unix", "Unlink a user's Unix account: agents run their tasks as their default account");
  unlink->add_option("USERNAME", a.user.username, "The Ringmaster user")->required();
  unlink->callback([&] { action = [&](CliEnv& env) { return UnlinkUnix(env, a.user.username); }; });

  auto* preview = app.add_subcommand(
      "preview-search", "Simulate CONFIG's searcher (no master needed): trials per rung, batches in all");
  preview->add_option("CONFIG", a.config, "Experiment config (YAML)")->required();
  preview->add_option("--seed", a.seed,
                      "Seed of the simulation (default: reproducibility.experiment_seed, or 0)");
  preview->callback([&] { action = [&](CliEnv& env) { return PreviewSearch(env, a.config, a.seed); }; });

  ConfigCheckOptions config_check;
  auto* config_cmd = app.add_subcommand("config", "Experiment configs");
  config_cmd->require_subcommand(1);
  auto* check =
      config_cmd->add_subcommand("check",
                                 "Print every error and warning of CONFIG; offline unless the "
                                 "master is given (-m/RING_MASTER), which also "
                                 "checks storage roots, the pool and its slots, and a warm start's source");
  check
      ->add_option("CONFIG", config_check.config_path, "Experiment, command, shell or notebook config (YAML)")
      ->required();
  check
      ->add_option("--kind", config_check.kind,
                   "experiment, or task (a command, shell or notebook config); default: a config without a "
                   "searcher that parses as a task config, or has idle_timeout, notebook_idle_type or "
                   "work_dir, is one")
      ->transform(
          CLI::CheckedTransformer(std::map<std::string, ConfigKind>{{"experiment", ConfigKind::kExperiment},
                                                                    {"task", ConfigKind::kTask}},
                                  CLI::ignore_case));
  check
      ->add_option("--config", config_check.overrides,
                   "Override a key first: key=value (as experiment create)")
      ->expected(1)
      ->take_all();
  check->callback([&] {
    config_check.ask_master =
        app.get_option("--master")->count() > 0 || std::getenv("RING_MASTER") != nullptr;
    action = [&](CliEnv& env) { return CheckConfig(env, config_check); };
  });

  std::reverse(args.begin(), args.end());  // CLI11 consumes the vector from the back
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e, out, err);
    return code == 0 ? kExitOk : kExitUsage;
  }

  if (!a.max_model_size.empty()) {
    auto size = ParseByteSize(a.max_model_size);
    if (!size || *size == 0) {
      err << "ring: error: --max-model-size expects a size like 64M or 1G, got \"" << a.max_model_size
          << "\"\n";
      return kExitUsage;
    }
    a.create.max_model_size = *size;
  }
  auto url = Url::Parse(a.master);
  if (!url.ok()) {
    err << "ring: error: bad master URL: " << url.status().message() << '\n';
    return kExitUsage;
  }
  if (!a.ca_file.empty()) {
    if (Status s = CheckCaFile(a.ca_file); !s.ok()) {
      err << "ring: error: --ca-file: " << s.message() << '\n';
      return kExitUsage;
    }
  }
  if (!action) {
    err << "ring: error: no command given; see ring --help\n";
    return kExitUsage;
  }
  MasterClient master(*url);
  master.SetCaFile(a.ca_file);
  if (auto token = TokenFor(url->ToString())) master.SetToken(*token);
  CliEnv env{out, err, &err == &std::cerr && ::isatty(STDERR_FILENO) == 1, a.json, master, PollInterval()};
  return action(env);
}

}  // namespace ring::cli
