#include "common/agent_protocol.h"

#include "common/archive.h"

#include <limits>
#include <string>
#include <type_traits>

namespace ring::proto {
namespace {

using nlohmann::json;

// Whether `v` is a JSON integer that `T` holds. nlohmann's get<int>() casts
// any number, which is undefined for one out of range ("rank": 1e300).
template <typename T>
bool FitsInteger(const json& v) {
  if (v.is_number_unsigned())
    return v.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<T>::max());
  return v.is_number_integer() && v.get<int64_t>() >= std::numeric_limits<T>::min() &&
         v.get<int64_t>() <= std::numeric_limits<T>::max();
}

// Reads a required field, turning a type mismatch into an error that names it.
template <typename T>
void Field(const json& j, const char* key, T& out, bool required = true) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    if (required) throw std::invalid_argument(std::string("missing field \"") + key + "\"");
    return;
  }
  bool integers_fit = true;
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) integers_fit = FitsInteger<T>(*it);
  if constexpr (std::is_same_v<T, std::vector<int>>)
    for (const auto& v : *it) integers_fit = integers_fit && FitsInteger<int>(v);
  if (!integers_fit) throw std::invalid_argument(std::string("field \"") + key + "\" has the wrong type");
  try {
    out = it->get<T>();
  } catch (const json::exception&) {
    throw std::invalid_argument(std::string("field \"") + key + "\" has the wrong type");
  }
}

ProcessState ParseProcessState(const std::string& s) {
  if (s == "starting") return ProcessState::kStarting;
  if (s == "running") return ProcessState::kRunning;
  if (s == "exited") return ProcessState::kExited;
  throw std::invalid_argument("field \"state\" must be starting, running or exited");
}

// A terminal's size: what a screen can be.
void TerminalSizeFields(const json& j, int& rows, int& cols) {
  Field(j, "rows", rows);
  Field(j, "cols", cols);
  if (rows < 1 || rows > 1000 || cols < 1 || cols > 1000)
    throw std::invalid_argument("fields \"rows\" and \"cols\" must be from 1 to 1000");
}

std::string DataField(const json& j) {
  std::string text;
  Field(j, "data", text);
  auto data = Base64Decode(text);
  if (!data.ok()) throw std::invalid_argument("field \"data\" is not base64");
  return *data;
}

Result<Message> DecodeTerminal(const std::string& type, const json& j) {
  std::string session;
  Field(j, "session", session);
  if (session.empty() || session.size() > 128)
    throw std::invalid_argument("field \"session\" must be 1-128 bytes");
  if (type == "terminal_open") {
    TerminalOpen m;
    m.session = session;
    Field(j, "allocation_id", m.allocation_id);
    Field(j, "rank", m.rank, false);
    TerminalSizeFields(j, m.rows, m.cols);
    return Message{std::move(m)};
  }
  if (type == "terminal_input") return Message{TerminalInput{session, DataField(j)}};
  if (type == "terminal_resize") {
    TerminalResize m;
    m.session = session;
    TerminalSizeFields(j, m.rows, m.cols);
    return Message{std::move(m)};
  }
  if (type == "terminal_close") return Message{TerminalClose{session}};
  if (type == "terminal_output") return Message{TerminalOutput{session, DataField(j)}};
  if (type == "terminal_closed") {
    TerminalClosed m;
    m.session = session;
    Field(j, "reason", m.reason, false);
    return Message{std::move(m)};
  }
  return InvalidArgument("unknown message type \"" + type + "\"");
}

}  // namespace

std::string_view ToString(ProcessState s) {
  switch (s) {
    case ProcessState::kStarting:
      return "starting";
    case ProcessState::kRunning:
      return "running";
    case ProcessState::kExited:
      return "exited";
  }
  return "exited";
}

void to_json(json& j, const Slot& s) {
  j = json{{"id", s.id}, {"type", s.type}, {"uuid", s.uuid}};
}

void from_json(const json& j, Slot& s) {
  Field(j, "id", s.id);
  Field(j, "type", s.type);
  Field(j, "uuid", s.uuid, false);
}

std::string Encode(const Message& message) {
  json j = std::visit(
      [](const auto& m) -> json {
        using M = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<M, Hello>) {
          json running = json::array();
          for (const auto& r : m.running)
            running.push_back({{"allocation_id", r.allocation_id}, {"rank", r.rank}, {"pid", r.pid}});
          json runtimes = json::array();
          for (const auto& r : m.container_runtimes)
            runtimes.push_back({{"name", r.name}, {"version", r.version}, {"rootless", r.rootless}});
          return {{"type", "hello"},
                  {"agent_id", m.agent_id},
                  {"pool", m.pool},
                  {"address", m.address},
                  {"version", m.version},
                  {"slots", m.slots},
                  {"running", running},
                  {"runs_as_owner", m.runs_as_owner},
                  {"container_runtimes", runtimes}};
        } else if constexpr (std::is_same_v<M, Welcome>) {
          return {{"type", "welcome"},
                  {"heartbeat_interval_ms", m.heartbeat_interval_ms},
                  {"heartbeat_timeout_ms", m.heartbeat_timeout_ms}};
        } else if constexpr (std::is_same_v<M, Heartbeat>) {
          return {{"type", "heartbeat"}};
        } else if constexpr (std::is_same_v<M, Start>) {
          json out = {{"type", "start"},
                      {"allocation_id", m.allocation_id},
                      {"allocation_token", m.allocation_token},
                      {"trial_id", m.trial_id},
                      {"experiment_id", m.experiment_id},
                      {"task_id", m.task_id},
                      {"task_kind", std::string(ToString(m.task_kind))},
                      {"rank", m.rank},
                      {"world_size", m.world_size},
                      {"local_rank", m.local_rank},
                      {"local_world_size", m.local_world_size},
                      {"master_addr", m.master_addr},
                      {"master_port", m.master_port},
                      {"slot_ids", m.slot_ids},
                      {"per_node", m.per_node},
                      {"node_rank", m.node_rank},
                      {"node_addrs", m.node_addrs},
                      {"node_slot_counts", m.node_slot_counts},
                      {"slot_type", m.slot_type},
                      {"entrypoint", m.entrypoint},
                      {"entrypoint_argv", m.entrypoint_argv},
                      {"hparams", m.hparams_json},
                      {"latest_checkpoint", m.latest_checkpoint},
                      {"environment", m.environment},
                      {"model_definition_path", m.model_definition_path},
                      {"owner", m.owner}};
          if (m.run_as) {
            out["run_as"] = {{"uid", m.run_as->uid},
                             {"gid", m.run_as->gid},
                             {"user", m.run_as->user},
                             {"group", m.run_as->group}};
          }
          if (m.container) {
            json mounts = json::array();
            for (const auto& mount : m.container->mounts)
              mounts.push_back({{"host_path", mount.host_path},
                                {"container_path", mount.container_path},
                                {"read_only", mount.read_only},
                                {"propagation", mount.propagation}});
            out["container"] = {{"image", m.container->image},
                                {"runtime", m.container->runtime},
                                {"force_pull", m.container->force_pull},
                                {"registry_auth", m.container->registry_auth},
                                {"checkpoint_path", m.container->checkpoint_path},
                                {"mounts", mounts}};
          }
          if (m.terminal) out["terminal"] = true;
          return out;
        } else if constexpr (std::is_same_v<M, Kill>) {
          return {{"type", "kill"},
                  {"allocation_id", m.allocation_id},
                  {"grace_ms", m.grace_ms},
                  {"reason", m.reason}};
        } else if constexpr (std::is_same_v<M, Stopping>) {
          return {{"type", "stopping"}, {"allocation_id", m.allocation_id}, {"reason", m.reason}};
        } else if constexpr (std::is_same_v<M, StateChange>) {
          json out = {{"type", "state"},
                      {"allocation_id", m.allocation_id},
                      {"rank", m.rank},
                      {"state", ToString(m.state)},
                      {"message", m.message}};
          if (m.exit_code) out["exit_code"] = *m.exit_code;
          if (m.signal) out["signal"] = *m.signal;
          if (m.agent_stopping) out["agent_stopping"] = true;
          return out;
        } else if constexpr (std::is_same_v<M, TerminalOpen>) {
          return {{"type", "terminal_open"}, {"allocation_id", m.allocation_id},
                  {"rank", m.rank},          {"session", m.session},
                  {"rows", m.rows},          {"cols", m.cols}};
        } else if constexpr (std::is_same_v<M, TerminalInput>) {
          return {{"type", "terminal_input"}, {"session", m.session}, {"data", Base64Encode(m.data)}};
        } else if constexpr (std::is_same_v<M, TerminalResize>) {
          return {{"type", "terminal_resize"}, {"session", m.session}, {"rows", m.rows}, {"cols", m.cols}};
        } else if constexpr (std::is_same_v<M, TerminalClose>) {
          return {{"type", "terminal_close"}, {"session", m.session}};
        } else if constexpr (std::is_same_v<M, TerminalOutput>) {
          return {{"type", "terminal_output"}, {"session", m.session}, {"data", Base64Encode(m.data)}};
        } else if constexpr (std::is_same_v<M, TerminalClosed>) {
          return {{"type", "terminal_closed"}, {"session", m.session}, {"reason", m.reason}};
        } else {
          static_assert(std::is_same_v<M, LogBatch>);
          json lines = json::array();
          for (const auto& l : m.lines) {
            lines.push_back({{"ts_ms", l.ts_ms}, {"stream", l.stream}, {"line", l.line}});
            if (l.rank) lines.back()["rank"] = *l.rank;
          }
          return {{"type", "log"},
                  {"allocation_id", m.allocation_id},
                  {"rank", m.rank},
                  {"seq", m.seq},
                  {"lines", lines}};
        }
      },
      message);
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

Result<Message> Decode(const std::string& text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return InvalidArgument("message is not a JSON object");
  try {
    std::string type;
    Field(j, "type", type);
    if (type == "hello") {
      Hello m;
      Field(j, "agent_id", m.agent_id);
      Field(j, "pool", m.pool, false);
      Field(j, "address", m.address, false);
      Field(j, "version", m.version, false);
      Field(j, "slots", m.slots);
      if (auto it = j.find("running"); it != j.end() && it->is_array()) {
        for (const auto& r : *it) {
          RunningProcess p;
          Field(r, "allocation_id", p.allocation_id);
          Field(r, "rank", p.rank);
          Field(r, "pid", p.pid, false);
          m.running.push_back(std::move(p));
        }
      }
      Field(j, "runs_as_owner", m.runs_as_owner, false);
      if (auto it = j.find("container_runtimes"); it != j.end() && it->is_array()) {
        for (const auto& r : *it) {
          ContainerRuntime runtime;
          Field(r, "name", runtime.name);
          Field(r, "version", runtime.version, false);
          Field(r, "rootless", runtime.rootless, false);
          m.container_runtimes.push_back(std::move(runtime));
        }
      }
      return Message{std::move(m)};
    }
    if (type == "welcome") {
      Welcome m;
      Field(j, "heartbeat_interval_ms", m.heartbeat_interval_ms);
      Field(j, "heartbeat_timeout_ms", m.heartbeat_timeout_ms);
      return Message{m};
    }
    if (type == "heartbeat") return Message{Heartbeat{}};
    if (type == "start") {
      Start m;
      Field(j, "allocation_id", m.allocation_id);
      Field(j, "allocation_token", m.allocation_token);
      Field(j, "trial_id", m.trial_id);
      Field(j, "experiment_id", m.experiment_id);
      Field(j, "task_id", m.task_id, false);
      std::string kind = "TRIAL";
      Field(j, "task_kind", kind, false);
      const std::optional<TaskKind> parsed = ParseTaskKind(kind);
      if (!parsed) return InvalidArgument("start: unknown task_kind \"" + kind + "\"");
      m.task_kind = *parsed;
      Field(j, "rank", m.rank);
      Field(j, "world_size", m.world_size);
      Field(j, "local_rank", m.local_rank);
      Field(j, "local_world_size", m.local_world_size);
      Field(j, "master_addr", m.master_addr, false);
      Field(j, "master_port", m.master_port, false);
      Field(j, "slot_ids", m.slot_ids);
      Field(j, "per_node", m.per_node, false);
      Field(j, "node_rank", m.node_rank, false);
      Field(j, "node_addrs", m.node_addrs, false);
      Field(j, "node_slot_counts", m.node_slot_counts, false);
      Field(j, "slot_type", m.slot_type);
      Field(j, "entrypoint", m.entrypoint);
      Field(j, "entrypoint_argv", m.entrypoint_argv, false);
      Field(j, "hparams", m.hparams_json, false);
      Field(j, "latest_checkpoint", m.latest_checkpoint, false);
      Field(j, "environment", m.environment, false);
      Field(j, "model_definition_path", m.model_definition_path);
      Field(j, "owner", m.owner, false);
      Field(j, "terminal", m.terminal, false);
      if (auto it = j.find("run_as"); it != j.end() && !it->is_null()) {
        RunAs run_as;
        Field(*it, "uid", run_as.uid);
        Field(*it, "gid", run_as.gid);
        Field(*it, "user", run_as.user, false);
        Field(*it, "group", run_as.group, false);
        if (run_as.uid < 0 || run_as.uid > 0xfffffffe || run_as.gid < 0 || run_as.gid > 0xfffffffe)
          throw std::invalid_argument("field \"run_as\" has a uid or gid out of range");
        m.run_as = std::move(run_as);
      }
      if (auto it = j.find("container"); it != j.end() && !it->is_null()) {
        Container c;
        Field(*it, "image", c.image);
        Field(*it, "runtime", c.runtime, false);
        Field(*it, "force_pull", c.force_pull, false);
        Field(*it, "registry_auth", c.registry_auth, false);
        Field(*it, "checkpoint_path", c.checkpoint_path, false);
        if (auto mounts = it->find("mounts"); mounts != it->end() && mounts->is_array()) {
          for (const auto& mj : *mounts) {
            Mount mount;
            Field(mj, "host_path", mount.host_path);
            Field(mj, "container_path", mount.container_path);
            Field(mj, "read_only", mount.read_only, false);
            Field(mj, "propagation", mount.propagation, false);
            c.mounts.push_back(std::move(mount));
          }
        }
        if (c.image.empty()) throw std::invalid_argument("field \"container.image\" is empty");
        m.container = std::move(c);
      }
      return Message{std::move(m)};
    }
    if (type == "kill") {
      Kill m;
      Field(j, "allocation_id", m.allocation_id);
      Field(j, "grace_ms", m.grace_ms, false);
      Field(j, "reason", m.reason, false);
      return Message{std::move(m)};
    }
    if (type == "state") {
      StateChange m;
      std::string state;
      Field(j, "allocation_id", m.allocation_id);
      Field(j, "rank", m.rank);
      Field(j, "state", state);
      m.state = ParseProcessState(state);
      int v = 0;
      if (j.contains("exit_code") && !j["exit_code"].is_null()) {
        Field(j, "exit_code", v);
        m.exit_code = v;
      }
      if (j.contains("signal") && !j["signal"].is_null()) {
        Field(j, "signal", v);
        m.signal = v;
      }
      Field(j, "message", m.message, false);
      Field(j, "agent_stopping", m.agent_stopping, false);
      return Message{std::move(m)};
    }
    if (type == "stopping") {
      Stopping m;
      Field(j, "allocation_id", m.allocation_id);
      Field(j, "reason", m.reason, false);
      return Message{std::move(m)};
    }
    if (type == "log") {
      LogBatch m;
      Field(j, "allocation_id", m.allocation_id);
      Field(j, "rank", m.rank);
      Field(j, "seq", m.seq, false);
      auto it = j.find("lines");
      if (it == j.end() || !it->is_array()) throw std::invalid_argument("field \"lines\" must be an array");
      for (const auto& l : *it) {
        LogLine line;
        Field(l, "ts_ms", line.ts_ms, false);
        Field(l, "stream", line.stream, false);
        Field(l, "line", line.line);
        if (auto r = l.find("rank"); r != l.end() && !r->is_null()) {
          int rank = 0;
          Field(l, "rank", rank);
          line.rank = rank;
        }
        m.lines.push_back(std::move(line));
      }
      return Message{std::move(m)};
    }
    if (type.rfind("terminal_", 0) == 0) return DecodeTerminal(type, j);
    return InvalidArgument("unknown message type \"" + type + "\"");
  } catch (const std::invalid_argument& e) {
    return InvalidArgument(e.what());
  }
}

}  // namespace ring::proto
