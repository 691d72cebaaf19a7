#include "cli/scheduling_commands.h"

#include <cmath>

#include "cli/format.h"
#include "cli/table.h"

namespace ring::cli {

int ListJobs(CliEnv& env) {
  auto res = env.master.Get("/api/v1/jobs");
  if (!res.ok()) return env.Fail(res.status());
  if (env.json) {
    env.out << res->dump(2) << '\n';
    return kExitOk;
  }
  const auto& jobs = Member(*res, "jobs");
  if (!jobs.is_array() || jobs.empty()) {
    env.out << "No jobs: nothing is queued or running.\n";
    return kExitOk;
  }
  // Per pool: running ones, then pending ones in scheduling order (#).
  Table table({"pool", "#", "allocation", "kind", "task", "experiment", "trial", "owner", "priority",
               "weight", "slots", "state", "queued", "why waiting"});
  table.SetMaxWidth(13, 70);
  for (const auto& j : jobs) {
    std::string state = Field(j, "state");
    if (Member(j, "preempting").is_boolean() && Member(j, "preempting").get<bool>()) state += " (stopping)";
    // The master words why it waits (on a Slurm pool: why Slurm keeps its
    // job pending), for this list and the web UI alike.
    std::string why =
        Member(j, "why_waiting").is_string() ? Field(j, "why_waiting") : Field(j, "pending_reason");
    if (Member(j, "slurm_job_id").is_number_integer())
      state += " (Slurm job " + Field(j, "slurm_job_id") + ")";
    // Another user's job on a master whose experiments are not team-readable.
    const bool hidden = Member(j, "private").is_boolean() && Member(j, "private").get<bool>();
    table.AddRow({Field(j, "pool"), Field(j, "position"), Field(j, "allocation_id"), Field(j, "kind"),
                  Field(j, "task_id"), Field(j, "experiment_id"), Field(j, "trial_id"),
                  hidden ? "(private)" : Field(j, "owner"), Field(j, "priority"), Field(j, "weight"),
                  Field(j, "slots"), state, Field(j, "queued_at"), why});
  }
  table.Print(env.out);
  return kExitOk;
}

int ListPools(CliEnv& env) {
  auto res = env.master.Get("/api/v1/pools");
  if (!res.ok()) return env.Fail(res.status());
  if (env.json) {
    env.out << res->dump(2) << '\n';
    return kExitOk;
  }
  Table table(
      {"pool", "runs on", "tasks run as", "scheduler", "agents", "slots", "used", "running", "pending"});
  std::vector<std::string> single;
  for (const auto& p : Member(*res, "pools")) {
    const std::string identity = Field(p, "task_identity");
    const std::string runs_as = identity == "owner"    ? "each owner"
                                : identity == "single" ? "the master's account"
                                                       : "per agent";
    if (identity == "single") single.push_back(Field(p, "name"));
    table.AddRow({Field(p, "name"), Field(p, "resource_manager") == "slurm" ? "Slurm" : "agents", runs_as,
                  Field(p, "scheduler"), Field(p, "agents_connected") + "/" + Field(p, "agents"),
                  Field(p, "slots"), Field(p, "slots_used"), Field(p, "jobs_running"),
                  Field(p, "jobs_pending")});
  }
  table.Print(env.out);
  // What a single-identity pool gives up (docs/slurm.md).
  for (const auto& name : single)
    env.out
        << "\nPool " << name
        << " is single-identity: its Slurm jobs all run as the master's Unix account, so trials of different "
           "users there can read and change each other's files and checkpoints. Use it only where every "
           "user may see every other user's work.\n";
  return kExitOk;
}

int SetExperimentResource(CliEnv& env, int64_t id, const std::string& what, const std::string& value) {
  nlohmann::json patch;
  try {
    size_t used = 0;
    if (what == "priority") {
      const long long p = std::stoll(value, &used);
      if (used != value.size() || p < 1 || p > 99) throw std::invalid_argument(value);
      patch["priority"] = p;
    } else if (what == "weight") {
      const double w = std::stod(value, &used);
      if (used != value.size() || !(w > 0) || !std::isfinite(w)) throw std::invalid_argument(value);
      patch["weight"] = w;
    } else if (what == "max-slots") {
      if (value == "none") {
        patch["max_slots"] = nullptr;
      } else {
        const long long m = std::stoll(value, &used);
        if (used != value.size() || m < 1) throw std::invalid_argument(value);
        patch["max_slots"] = m;
      }
    } else {
      env.err << "ring: error: unknown setting \"" << what << "\"; use priority, weight or max-slots\n";
      return kExitUsage;
    }
  } catch (const std::exception&) {
    env.err << "ring: error: " << what << " must be "
            << (what == "priority" ? "an integer from 1 to 99 (lower runs first)"
                : what == "weight" ? "a positive number"
                                   : "a positive integer, or none")
            << ", got \"" << value << "\"\n";
    return kExitUsage;
  }
  auto res = env.master.Patch("/api/v1/experiments/" + std::to_string(id), patch);
  if (!res.ok()) return env.Fail(res.status());
  if (env.json) {
    env.out << res->dump(2) << '\n';
    return kExitOk;
  }
  const auto& r = Member(*res, "resources");
  env.out << "Experiment " << id << ": priority " << Field(r, "priority") << ", weight " << Field(r, "weight")
          << ", max slots "
          << (Member(r, "max_slots").is_null() ? std::string("none") : Field(r, "max_slots")) << '\n';
  return kExitOk;
}

int SetAgentEnabled(CliEnv& env, const std::string& agent_id, bool enabled, bool drain) {
  const std::string path = "/api/v1/agents/" + PercentEncode(agent_id) + (enabled ? "/enable" : "/disable");
  auto res = env.master.Post(path, enabled ? nlohmann::json::object() : nlohmann::json{{"drain", drain}});
  if (!res.ok()) return env.Fail(res.status());
  if (env.json) {
    env.out << res->dump(2) << '\n';
  } else if (enabled) {
    env.out << "Agent " << agent_id << " enabled: new work may be placed on it\n";
  } else {
    env.out << "Agent " << agent_id << " disabled: no new work is placed on it; "
            << (drain ? "its running work finishes first\n"
                      : "its running work checkpoints, stops and resumes elsewhere\n");
  }
  return kExitOk;
}

}  // namespace ring::cli
