#include "master/scheduler/scheduling_reasons.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

namespace ring::scheduling {
namespace {

// The experiment config key a single-node request comes from, named in its reasons.
constexpr const char* kSingleNodeKey = "resources.is_single_node";

// Why a request's slots must be on one agent, as its reasons say it.
std::string OneAgentWhy(const Need& need) {
  return need.span == Span::kOneProcess ? "it is one process" : kSingleNodeKey;
}

std::string Plural(int n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// "8", "4 or 8", "2, 4 or 8".
std::string OrList(const std::vector<std::string>& items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += i + 1 == items.size() ? " or " : ", ";
    out += items[i];
  }
  return out;
}

std::string AndList(const std::vector<std::string>& items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += i + 1 == items.size() ? " and " : ", ";
    out += items[i];
  }
  return out;
}

}  // namespace

std::optional<std::string> NeverFitsIn(const std::vector<AgentView>& agents, const Need& need,
                                       const std::string& pool) {
  const int slots = need.slots;
  if (slots == 0) return std::nullopt;  // any agent will do
  if (slots < 0) return "can never fit: needs at least one slot";
  std::set<int> sizes;
  for (const auto& a : agents) {
    const int size = std::max(a.total_slots, static_cast<int>(a.free_slots.size()));
    if (size <= 0) continue;
    if (size >= slots || (need.whole_agents() && slots % size == 0)) return std::nullopt;
    sizes.insert(size);
  }
  if (sizes.empty()) return std::nullopt;
  if (!need.whole_agents())
    return "can never fit: needs " + std::to_string(slots) + " slots on one agent (" + OneAgentWhy(need) +
           "); the largest agent in pool " + pool + " has " + std::to_string(*sizes.rbegin());
  std::vector<std::string> listed;
  for (int s : sizes) listed.push_back(std::to_string(s));
  return "can never fit: needs " + std::to_string(slots) + " slots, a multiple of no agent size in pool " +
         pool + " (agents have " + OrList(listed) + " slots)";
}

std::string MaxSlotsReason(int slots, int max_slots) {
  if (slots > max_slots)
    return "needs " + std::to_string(slots) + " slots, more than the experiment's max_slots (" +
           std::to_string(max_slots) + ")";
  return "experiment at max_slots (" + std::to_string(max_slots) + ")";
}

std::string WaitingReason(const std::vector<std::string_view>& allocation_ids) {
  // As AndList over the first kNamed ids and "N more", built in place: a
  // pass says it for every request promised slots.
  constexpr size_t kNamed = 3;
  const size_t named = std::min(kNamed, allocation_ids.size());
  const std::string more =
      allocation_ids.size() > kNamed ? std::to_string(allocation_ids.size() - kNamed) + " more" : "";
  const size_t items = named + (more.empty() ? 0 : 1);
  std::string out =
      allocation_ids.size() == 1 ? "waiting for preempted allocation " : "waiting for preempted allocations ";
  for (size_t i = 0; i < items; ++i) {
    if (i > 0) out += i + 1 == items ? " and " : ", ";
    out += i < named ? allocation_ids[i] : std::string_view(more);
  }
  out += " to stop";
  return out;
}

std::string ExcludedReason(const std::vector<std::string>& agent_ids) {
  constexpr size_t kNamed = 3;
  std::vector<std::string> named(agent_ids.begin(), agent_ids.begin() + std::min(kNamed, agent_ids.size()));
  if (agent_ids.size() > kNamed) named.push_back(std::to_string(agent_ids.size() - kNamed) + " more");
  return std::string("; never on ") + (agent_ids.size() == 1 ? "agent " : "agents ") + AndList(named) +
         " (its log_policies matched an exclude_node pattern there)";
}

std::string NoContainerAgentReason(const ContainerNeed& need, int agents, const std::string& pool) {
  const std::string none = "none of the " + Plural(agents, "agent", "agents") + " in pool " + pool;
  if (need.runtime.empty())
    return "waits for an agent with a container runtime (environment.image): " + none + " has one";
  return "waits for an agent with container runtime " + need.runtime +
         " (environment.image; the pool's container_runtime): " + none + " has it";
}

std::string ContainerAgentsReason(const ContainerNeed& need, int capable, int agents,
                                  const std::string& pool) {
  const std::string with = need.runtime.empty() ? "a container runtime" : need.runtime;
  return "; only on agents with " + with + " (" + std::to_string(capable) + " of " + std::to_string(agents) +
         " in pool " + pool + ")";
}

std::string BehindReason(int holders_ahead, bool all_higher_priority) {
  if (all_higher_priority)
    return "behind " + Plural(holders_ahead, "higher-priority job", "higher-priority jobs");
  return "behind " + Plural(holders_ahead, "job", "jobs") + " ahead of it in the queue";
}

std::string AtShareReason(double share, int capacity) {
  char text[32];
  if (std::abs(share - std::round(share)) < 0.005)
    std::snprintf(text, sizeof text, "%.0f", share);
  else
    std::snprintf(text, sizeof text, "%.2f", share);
  return std::string("at its fair share (") + text + " of " + std::to_string(capacity) + " slots)";
}

bool FitsPhysically(const PoolSlots& slots, const std::vector<int>& idle_per_shape, int largest_free,
                    const Need& need) {
  const int request_slots = need.slots;
  if (request_slots <= largest_free) return true;
  if (!need.whole_agents()) return false;
  const auto& shapes = slots.shapes();
  for (size_t g = 0; g < shapes.size(); ++g) {
    const int size = shapes[g].size;
    if (size < request_slots && request_slots % size == 0 && idle_per_shape[g] >= request_slots / size)
      return true;
  }
  return false;
}

std::string ShapeReason(const PoolSlots& slots, const std::vector<int>& idle_per_shape, int largest_free,
                        const Need& need, const std::string& pool) {
  const int request_slots = need.slots;
  const std::string n = Plural(request_slots, "slot", "slots");
  const std::string on_one =
      need.whole_agents() ? " on one agent" : " on one agent (" + OneAgentWhy(need) + ")";
  if (request_slots <= slots.max_enabled_size())
    return "needs " + n + on_one + "; largest free block in pool " + pool + " is " +
           std::to_string(largest_free);
  if (!need.whole_agents()) {
    if (request_slots <= slots.max_size())
      return "needs " + n + on_one + "; only disabled agents in pool " + pool + " have that many";
    return "needs " + n + on_one + "; no agent in pool " + pool + " has that many";
  }
  // Larger than every enabled agent: whole agents of the largest dividing
  // shape that has enough enabled agents, else of the largest dividing shape.
  const auto& shapes = slots.shapes();
  const bool several_types = std::any_of(shapes.begin(), shapes.end(),
                                         [&](const Shape& s) { return s.slot_type != shapes[0].slot_type; });
  int chosen = -1;
  for (size_t g = 0; g < shapes.size(); ++g) {
    const int size = shapes[g].size;
    if (size >= request_slots || request_slots % size != 0) continue;
    if (chosen < 0) chosen = static_cast<int>(g);
    if (shapes[g].enabled >= request_slots / size) {
      chosen = static_cast<int>(g);
      break;
    }
  }
  if (chosen < 0) {
    if (request_slots <= slots.max_size())
      return "needs " + n + " on one agent; only disabled agents in pool " + pool + " have that many";
    return "needs " + n + "; no agent shape in pool " + pool + " takes it";
  }
  const Shape& shape = shapes[chosen];
  const int agents = request_slots / shape.size;
  const std::string kind = (several_types ? shape.slot_type + " " : std::string()) + "agents of " +
                           std::to_string(shape.size) + " slots";
  const std::string head = "needs " + std::to_string(agents) + " whole idle " + kind + "; ";
  if (shape.enabled < agents)
    return head + "pool " + pool + " has " + std::to_string(shape.enabled) + " enabled";
  return head + std::to_string(idle_per_shape[chosen]) + (idle_per_shape[chosen] == 1 ? " is" : " are") +
         " idle in pool " + pool;
}

}  // namespace ring::scheduling
