#include "cli/agent_commands.h"

#include <set>

#include "cli/format.h"
#include "cli/table.h"

namespace ring::cli {

int ListAgents(CliEnv& env) {
  auto res = env.master.Get("/api/v1/agents");
  if (!res.ok()) return env.Fail(res.status());
  if (env.json) {
    env.out << res->dump(2) << '\n';
    return kExitOk;
  }
  Table table(
      {"id", "pool", "state", "mode", "containers", "address", "slots", "used", "enrolled", "last seen"});
  const auto& agents = Member(*res, "agents");
  if (agents.is_array()) {
    for (const auto& a : agents) {
      const auto& slots = Member(a, "slots");
      size_t total = 0;
      size_t used = 0;
      std::set<std::string> types;
      if (slots.is_array()) {
        for (const auto& s : slots) {
          ++total;
          if (!Member(s, "allocation_id").is_null()) ++used;
          types.insert(GetString(s, "type", "?"));
        }
      }
      std::string type_list;
      for (const auto& t : types) type_list += (type_list.empty() ? "" : ",") + t;
      std::string state = Field(a, "state");
      if (Member(a, "revoked").is_boolean() && Member(a, "revoked").get<bool>())
        state += " (removed)";
      else if (Member(a, "enabled").is_boolean() && !Member(a, "enabled").get<bool>())
        state += Member(a, "draining").is_boolean() && Member(a, "draining").get<bool>() ? " (draining)"
                                                                                         : " (disabled)";
      const auto& as_owner = Member(a, "runs_as_owner");
      const std::string mode = as_owner.is_boolean() && as_owner.get<bool>() ? "as owner" : "single-user";
      // The container runtimes of its hello: "podman 4.3.1", or "none".
      std::string runtimes;
      if (const auto& list = Member(a, "container_runtimes"); list.is_array())
        for (const auto& r : list) {
          std::string one = GetString(r, "name", "?") + " " + GetString(r, "version", "");
          if (Member(r, "rootless").is_boolean() && Member(r, "rootless").get<bool>()) one += " (rootless)";
          runtimes += (runtimes.empty() ? "" : ", ") + one;
        }
      table.AddRow({Field(a, "id"), Field(a, "pool"), state, mode, runtimes.empty() ? "none" : runtimes,
                    Field(a, "address"), std::to_string(total) + (type_list.empty() ? "" : " " + type_list),
                    std::to_string(used),
                    Member(a, "enrolled_at").is_string() ? Field(a, "enrolled_at") : "-",
                    Field(a, "last_seen_at")});
    }
  }
  table.Print(env.out);
  return kExitOk;
}

int RemoveAgent(CliEnv& env, const std::string& agent_id) {
  auto res = env.master.Delete("/api/v1/agents/" + PercentEncode(agent_id));
  if (!res.ok()) return env.Fail(res.status());
  if (env.json) {
    env.out << res->dump(2) << '\n';
    return kExitOk;
  }
  env.out
      << "Agent " << agent_id
      << " removed: its credential no longer connects, its connection is closed and its work ends. It may "
         "enrol again only with the cluster token (delete its state folder's credential file first).\n";
  return kExitOk;
}

int AllowAgentSlots(CliEnv& env, const std::string& agent_id, int64_t slots) {
  auto res = env.master.Post("/api/v1/agents/" + PercentEncode(agent_id) + "/slots", {{"slots", slots}});
  if (!res.ok()) return env.Fail(res.status());
  if (env.json) {
    env.out << res->dump(2) << '\n';
    return kExitOk;
  }
  env.out << "Agent " << agent_id << " may offer up to " << slots << " slots from its next connection\n";
  return kExitOk;
}

int RotateClusterToken(CliEnv& env, bool print_token) {
  auto res = env.master.Post("/api/v1/master/cluster-token/rotate", nlohmann::json::object());
  if (!res.ok()) return env.Fail(res.status());
  if (env.json) {
    env.out << res->dump(2) << '\n';
  } else if (print_token) {
    env.out << Field(*res, "cluster_token") << '\n';
  } else {
    env.out << "New cluster token written to " << Field(*res, "cluster_token_file")
            << " on the master. Enrolled agents stay connected; agents that enrol from now on need the new "
               "token (the old one is refused). --print shows it.\n";
  }
  return kExitOk;
}

}  // namespace ring::cli
