#include "cli/task_commands.h"

#include <fstream>
#include <sstream>
#include <thread>

#include "cli/format.h"
#include "cli/table.h"
#include "common/archive.h"

namespace ring::cli {
namespace {

std::string Singular(const std::string& plural) {
  return plural.substr(0, plural.size() - 1);
}

// The exit code a followed task hands to the shell: its own, else 1 (it
// ended without one: killed, preempted, its agent lost).
int ExitCodeOf(const nlohmann::json& answer) {
  const auto& code = Member(answer, "exit_code");
  if (code.is_number_integer()) return code.get<int>();
  return kExitFailure;
}

}  // namespace

Result<nlohmann::json> CreateTask(CliEnv& env, const std::string& plural, const TaskRunOptions& options) {
  nlohmann::json body = nlohmann::json::object();
  if (!options.config_file.empty()) {
    std::ifstream in(options.config_file);
    if (!in) return InvalidArgument("cannot read --config-file " + options.config_file);
    std::stringstream text;
    text << in.rdbuf();
    body["config"] = text.str();
    body["config_file"] = options.config_file;
  }
  if (!options.argv.empty()) body["argv"] = options.argv;
  if (options.slots) body["slots"] = *options.slots;
  if (options.pool) body["resource_pool"] = *options.pool;
  if (options.priority) body["priority"] = *options.priority;
  if (options.preemptible) body["preemptible"] = true;
  if (!options.context_dir.empty()) {
    PackOptions pack;
    pack.max_bytes = options.max_context_size;
    auto archive = PackDirectory(options.context_dir, pack);
    if (!archive.ok())
      return Status(archive.status().code(), "cannot pack the context folder " + options.context_dir + ": " +
                                                 archive.status().message());
    body["context"] = Base64Encode(*archive);
  }
  std::string text;
  try {
    text = body.dump();
  } catch (const nlohmann::json::type_error&) {
    return InvalidArgument("the config or the command is not UTF-8 text");
  }
  auto created = env.master.Post("/api/v1/" + plural, body);
  if (!created.ok()) return created.status();
  if (!(env.json && options.detach)) {
    env.err << "Created " << Singular(plural) << " " << GetInt(*created, "id");
    if (Member(*created, "pending_reason").is_string())
      env.err << " (waiting: " << Field(*created, "pending_reason") << ")";
    env.err << '\n';
  }
  return created;
}

int RunTask(CliEnv& env, const std::string& plural, const TaskRunOptions& options) {
  auto created = CreateTask(env, plural, options);
  if (!created.ok()) return env.Fail(created.status());
  const int64_t id = GetInt(*created, "id");
  if (env.json && options.detach) {
    env.out << created->dump(2) << '\n';
    return kExitOk;
  }
  if (options.detach) {
    env.out << id << '\n';
    return kExitOk;
  }
  return TaskLogs(env, plural, id, true);
}

int ListTasks(CliEnv& env, const std::string& plural) {
  auto res = env.master.Get("/api/v1/" + plural);
  if (!res.ok()) return env.Fail(res.status());
  if (env.json) {
    env.out << res->dump(2) << '\n';
    return kExitOk;
  }
  const auto& list = Member(*res, plural);
  if (!list.is_array() || list.empty()) {
    env.out << "No " << plural << ".\n";
    return kExitOk;
  }
  Table table({"id", "owner", "state", "slots", "pool", "exit", "ended by", "command", "why waiting"});
  table.SetMaxWidth(7, 50);
  table.SetMaxWidth(8, 60);
  for (const auto& t : list) {
    std::string argv;
    for (const auto& a : Member(t, "argv")) argv += (argv.empty() ? "" : " ") + a.get<std::string>();
    table.AddRow({Field(t, "id"), Field(t, "owner"), Field(t, "state"), Field(t, "slots"),
                  Field(t, "resource_pool"), Field(t, "exit_code"), Field(t, "end_cause"), argv,
                  Field(t, "pending_reason")});
  }
  table.Print(env.out);
  return kExitOk;
}

int TaskLogs(CliEnv& env, const std::string& plural, int64_t id, bool follow) {
  int64_t offset = 0;
  bool unreachable = false;
  std::chrono::steady_clock::time_point unreachable_since{};
  for (;;) {
    const std::string target = "/api/v1/" + plural + "/" + std::to_string(id) +
                               "/logs?offset=" + std::to_string(offset) +
                               "&follow=" + (follow ? "true" : "false");
    auto res = env.master.Get(target);
    if (!res.ok()) {
      // While following, ride out a master restart for a while.
      if (follow && IsTransportError(res.status())) {
        const auto now = std::chrono::steady_clock::now();
        if (!unreachable) unreachable_since = now;
        unreachable = true;
        if (now - unreachable_since < env.unreachable_grace) {
          std::this_thread::sleep_for(env.poll_interval);
          continue;
        }
      }
      return env.Fail(res.status());
    }
    unreachable = false;
    const auto& logs = Member(*res, "logs");
    const size_t count = logs.is_array() ? logs.size() : 0;
    for (size_t i = 0; i < count; ++i) {
      if (env.json)
        env.out << logs[i].dump() << '\n';
      else
        env.out << GetString(logs[i], "line") << '\n';
    }
    env.out << std::flush;
    const int64_t next = GetInt(*res, "offset", offset);
    if (count > 0 && next <= offset) return kExitOk;  // not advancing: avoid a loop
    offset = next;
    if (count > 0) continue;  // there may be more right away
    if (!follow) return kExitOk;
    const auto& ended = Member(*res, "ended");
    if (ended.is_boolean() && ended.get<bool>()) {
      // Say why, unless it simply exited: killed, preempted, its agent lost.
      const std::string cause = Field(*res, "end_cause");
      if (cause != "COMPLETED" && cause != "FAILED")
        env.err << Singular(plural) << " " << id << " ended: " << cause << '\n';
      return ExitCodeOf(*res);
    }
    std::this_thread::sleep_for(env.poll_interval / 4);
  }
}

int KillTask(CliEnv& env, const std::string& plural, int64_t id) {
  auto res =
      env.master.Post("/api/v1/" + plural + "/" + std::to_string(id) + "/kill", nlohmann::json::object());
  if (!res.ok()) return env.Fail(res.status());
  if (env.json)
    env.out << res->dump(2) << '\n';
  else
    env.out << "Asked " << Singular(plural) << " " << id << " to stop.\n";
  return kExitOk;
}

Result<nlohmann::json> WaitForTask(CliEnv& env, const std::string& plural, const std::string& noun,
                                   int64_t id, const std::function<bool(const nlohmann::json&)>& ready) {
  std::string said;
  for (;;) {
    auto task = env.master.Get("/api/v1/" + plural + "/" + std::to_string(id));
    if (!task.ok()) return task.status();
    if (ready(*task)) return task;
    if (!Member(*task, "ended_at").is_null())
      return Conflict(noun + " " + std::to_string(id) +
                      " ended before it was ready: " + Field(*task, "exit_reason"));
    if (const auto& reason = Member(*task, "pending_reason"); reason.is_string() && reason != said) {
      said = reason.get<std::string>();
      env.err << noun << " " << id << " waits: " << said << '\n';
    }
    std::this_thread::sleep_for(env.poll_interval);
  }
}

int StartTask(CliEnv& env, const std::string& plural, const std::string& noun, const TaskRunOptions& options,
              const std::function<bool(const nlohmann::json&)>& ready,
              const std::function<int(int64_t)>& open) {
  auto created = CreateTask(env, plural, options);
  if (!created.ok()) return env.Fail(created.status());
  const int64_t id = GetInt(*created, "id");
  if (options.detach) {
    if (env.json)
      env.out << created->dump(2) << '\n';
    else
      env.out << id << '\n';
    return kExitOk;
  }
  auto waited = WaitForTask(env, plural, noun, id, ready);
  if (!waited.ok()) return env.Fail(waited.status());
  return open(id);
}

}  // namespace ring::cli
