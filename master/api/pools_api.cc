// GET /api/v1/pools: each resource pool with its policy (master.yaml) and
// what it holds now: agents, slots in use, running and waiting jobs. Pools
// that agents joined without master.yaml naming them are listed too.
#include <map>

#include "master/api/json_views.h"
#include "master/api/routes.h"
#include "master/lifecycle/lifecycle.h"
#include "master/rm/agentrm/agent_rm.h"
#include "master/rm/routing_rm.h"

namespace ring {
namespace {

struct PoolCounts {
  int64_t agents = 0, agents_connected = 0, slots = 0, slots_used = 0, jobs_running = 0, jobs_pending = 0;
};

ApiResponse ListPools(ApiContext& ctx, const nlohmann::json& jobs) {
  std::map<std::string, PoolCounts> counts;
  for (const auto& p : ctx.lifecycle.scheduling().pools()) counts[p.name];
  for (const auto& [pool, n] : ctx.agents.CountAgents()) {  // counted, not listed
    auto& c = counts[pool];
    for (const auto& [state, k] : n.agents) {
      c.agents += k;
      if (state == AgentState::kConnected) c.agents_connected += k;
    }
    c.slots += n.slots;
    c.slots_used += n.slots_used;
  }
  // A Slurm pool's nodes count as its agents, their slots as its slots.
  if (ctx.routing)
    for (const auto& slurm : ctx.routing->slurm())
      for (const auto& node : slurm->Offers()) {
        auto& c = counts[node.pool];
        ++c.agents;
        if (node.enabled) ++c.agents_connected;
        c.slots += node.total_slots;
        c.slots_used += node.total_slots - static_cast<int64_t>(node.free_slots.size());
      }
  for (const auto& j : jobs) {
    auto& c = counts[j.value("pool", "default")];
    if (j["pending_reason"].is_null())
      ++c.jobs_running;
    else
      ++c.jobs_pending;
  }
  nlohmann::json list = nlohmann::json::array();
  // Whose account runs a pool's work: on a Slurm pool, each owner's
  // (submit helper) or the master's for everyone (single identity); on a
  // pool of agents each agent says (GET /api/v1/agents).
  std::map<std::string, std::string> identity;
  if (ctx.routing)
    for (const auto& slurm : ctx.routing->slurm())
      identity[slurm->pool()] = slurm->RunsAsOwner() ? "owner" : "single";
  auto add = [&](const std::string& name, const PoolSettings* settings) {
    const auto& c = counts[name];
    const auto id = identity.find(name);
    list.push_back({{"name", name},
                    {"resource_manager", id == identity.end() ? "agent" : "slurm"},
                    {"task_identity", id == identity.end() ? "agent" : id->second},
                    {"configured", settings != nullptr},
                    {"description", settings ? settings->description : ""},
                    {"scheduler", settings ? settings->scheduler : ""},
                    {"preemption", settings ? settings->preemption : false},
                    {"fitting_policy", settings ? settings->fitting_policy : ""},
                    {"agents", c.agents},
                    {"agents_connected", c.agents_connected},
                    {"slots", c.slots},
                    {"slots_used", c.slots_used},
                    {"jobs_running", c.jobs_running},
                    {"jobs_pending", c.jobs_pending}});
  };
  std::map<std::string, const PoolSettings*> configured;
  for (const auto& p : ctx.lifecycle.scheduling().pools()) configured[p.name] = &p;
  for (const auto& p : ctx.lifecycle.scheduling().pools()) add(p.name, &p);
  for (const auto& [name, c] : counts)
    if (!configured.count(name)) add(name, nullptr);
  const auto total = list.size();
  return ApiResponse::Json({{"pools", std::move(list)}, {"total", total}});
}

}  // namespace

void RegisterPoolRoutes(Router& router, ApiContext& ctx) {
  router.Add("GET", "/api/v1/pools", Access::kUser, [&ctx](ApiRequest&) {
    return OnLifecycle(ctx, [&ctx](Lifecycle& l) { return ListPools(ctx, JobsJson(l.scheduling().Jobs())); });
  });
}

}  // namespace ring
