// Runs every scenario file under tests/scheduler/scenarios: a pool (policy,
// agents, running allocations, pending requests) and the decision expected
// of one SchedulePool pass. The format is described in docs/scheduling.md:
//
//   description: what the scenario shows
//   pool: gpu                                  # default "default"
//   policy: {type: priority, preemption: true, fit: best}
//   experiments: {1: {priority: 10, weight: 3, max_slots: 8}}   # per-experiment defaults
//   agents:
//     - {id: a, slots: 8}                      # free: every slot no running allocation holds
//     - {id: b, slots: 4, free: [2, 3], type: cuda, enabled: false, runtimes: [podman]}
//   running:
//     - {id: "1.0", exp: 1, on: "a:0-3", priority: 42, started: 1, preemptible: true, preempting: false}
//   pending:
//     - {id: "2.0", exp: 2, slots: 4, priority: 42, seq: 1, single_node: false, avoid: [b]}   # avoid:
//     excluded agents
//     - {id: "3.0", slots: 1, container: {runtime: podman, cpu: true, cuda: true}}  # an image; {}: any
//     runtime
//   expect:
//     assign: {"2.0": "a:4-7"}                 # exactly these ("a:0-7 b:0-7" across agents)
//     preempt: ["1.0"]                         # exactly these, in the order decided
//     reasons: {"3.0": "experiment at max_slots (8)"}   # these; others need only exist
//     order: ["2.0", "3.0"]                    # optional
//
// Besides the expectations, every decision must keep the invariants of the
// scheduler (gang, free slots only, one owner per slot, a single-node request
// on one agent, a reason for every waiting request) and be the same when the
// input vectors come reversed.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "master/scheduler/pool_scheduler.h"
#include "master/scheduler/scheduler.h"

namespace ring {
namespace {

struct Scenario {
  std::string path;
  std::string description;
  PoolInput input;
  std::map<std::string, std::string> assign;  // canonical "agent:slots ..." forms
  std::vector<std::string> preempt;
  std::map<std::string, std::string> reasons;
  std::optional<std::vector<std::string>> order;
};

[[noreturn]] void Fail(const std::string& path, const YAML::Node& node, const std::string& what) {
  throw std::runtime_error(path + ":" + std::to_string(node.Mark().line + 1) + ": " + what);
}

// "0-3,6" -> {0, 1, 2, 3, 6}
std::vector<int> ParseSlotList(const std::string& text) {
  std::vector<int> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    const std::string item = text.substr(start, comma - start);
    if (item.empty()) throw std::invalid_argument("empty slot in \"" + text + "\"");
    const size_t dash = item.find('-');
    const int lo = std::stoi(item.substr(0, dash));
    const int hi = dash == std::string::npos ? lo : std::stoi(item.substr(dash + 1));
    for (int s = lo; s <= hi; ++s) out.push_back(s);
    start = comma + 1;
  }
  return out;
}

// "a:0-3 b:0,1" -> placements
std::vector<Placement> ParsePlacements(const std::string& text) {
  std::vector<Placement> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t space = text.find(' ', start);
    if (space == std::string::npos) space = text.size();
    const std::string item = text.substr(start, space - start);
    start = space + 1;
    if (item.empty()) continue;
    const size_t colon = item.find(':');
    if (colon == std::string::npos) throw std::invalid_argument("\"" + item + "\" is not agent:slots");
    out.push_back({item.substr(0, colon), ParseSlotList(item.substr(colon + 1))});
  }
  return out;
}

std::string FormatSlots(std::vector<int> slots) {
  std::sort(slots.begin(), slots.end());
  std::string out;
  for (size_t i = 0; i < slots.size();) {
    size_t j = i;
    while (j + 1 < slots.size() && slots[j + 1] == slots[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(slots[i]);
    if (j > i) out += "-" + std::to_string(slots[j]);
    i = j + 1;
  }
  return out;
}

std::string FormatPlacements(const std::vector<Placement>& placements) {
  std::string out;
  for (const auto& p : placements)
    out += (out.empty() ? "" : " ") + p.agent_id + ":" + FormatSlots(p.slot_ids);
  return out;
}

template <typename T>
T Get(const std::string& path, const YAML::Node& node, const char* key, T fallback) {
  const YAML::Node v = node[key];
  if (!v) return fallback;
  try {
    return v.as<T>();
  } catch (const YAML::Exception&) {
    Fail(path, v, std::string("bad value for ") + key);
  }
}

void CheckKeys(const std::string& path, const YAML::Node& node, const std::set<std::string>& allowed) {
  if (!node.IsMap()) Fail(path, node, "expected a mapping");
  for (const auto& kv : node)
    if (!allowed.count(kv.first.as<std::string>()))
      Fail(path, kv.first, "unknown key " + kv.first.as<std::string>());
}

Scenario Load(const std::string& path) {
  const YAML::Node root = YAML::LoadFile(path);
  CheckKeys(path, root,
            {"description", "pool", "policy", "experiments", "agents", "running", "pending", "expect"});
  Scenario s;
  s.path = path;
  s.description = Get<std::string>(path, root, "description", "");
  if (s.description.empty()) Fail(path, root, "a scenario says what it shows in `description`");
  auto& in = s.input;
  in.pool = Get<std::string>(path, root, "pool", "default");

  if (const auto policy = root["policy"]) {
    CheckKeys(path, policy, {"type", "preemption", "fit"});
    const auto type = Get<std::string>(path, policy, "type", "priority");
    if (type != "priority" && type != "fair_share")
      Fail(path, policy, "policy type is priority or fair_share");
    in.policy.type = type == "priority" ? PoolPolicy::Type::kPriority : PoolPolicy::Type::kFairShare;
    in.policy.preemption = Get<bool>(path, policy, "preemption", true);
    const auto fit = Get<std::string>(path, policy, "fit", "best");
    if (fit != "best" && fit != "worst") Fail(path, policy, "fit is best or worst");
    in.policy.fit = fit == "best" ? PoolPolicy::Fit::kBest : PoolPolicy::Fit::kWorst;
  }

  struct ExperimentDefaults {
    int priority = kDefaultPriority;
    double weight = 1;
    std::optional<int> max_slots;
  };
  std::map<int64_t, ExperimentDefaults> experiments;
  for (const auto& kv : root["experiments"]) {
    CheckKeys(path, kv.second, {"priority", "weight", "max_slots"});
    auto& d = experiments[kv.first.as<int64_t>()];
    d.priority = Get<int>(path, kv.second, "priority", d.priority);
    d.weight = Get<double>(path, kv.second, "weight", d.weight);
    if (kv.second["max_slots"]) d.max_slots = Get<int>(path, kv.second, "max_slots", 0);
  }

  std::map<std::string, std::set<int>> busy;  // agent -> slots held by running allocations
  int64_t index = 0;
  for (const auto& n : root["running"]) {
    CheckKeys(path, n,
              {"id", "exp", "on", "priority", "weight", "max_slots", "started", "preemptible", "preempting"});
    RunningAllocation r;
    r.allocation_id = Get<std::string>(path, n, "id", "");
    r.experiment_id = Get<int64_t>(path, n, "exp", 1);
    const auto& d = experiments[r.experiment_id];
    r.priority = Get<int>(path, n, "priority", d.priority);
    r.weight = Get<double>(path, n, "weight", d.weight);
    r.max_slots = n["max_slots"] ? std::optional<int>(Get<int>(path, n, "max_slots", 0)) : d.max_slots;
    r.started_seq = Get<int64_t>(path, n, "started", ++index);
    r.preemptible = Get<bool>(path, n, "preemptible", true);
    r.preempting = Get<bool>(path, n, "preempting", false);
    try {
      r.placements = ParsePlacements(Get<std::string>(path, n, "on", ""));
    } catch (const std::exception& e) {
      Fail(path, n, e.what());
    }
    if (r.allocation_id.empty() || r.placements.empty())
      Fail(path, n, "a running allocation needs id and on");
    for (const auto& p : r.placements) {
      r.slots += static_cast<int>(p.slot_ids.size());
      for (int slot : p.slot_ids)
        if (!busy[p.agent_id].insert(slot).second)
          Fail(path, n, "slot " + p.agent_id + ":" + std::to_string(slot) + " is held twice");
    }
    in.running.push_back(std::move(r));
  }

  for (const auto& n : root["agents"]) {
    CheckKeys(path, n, {"id", "slots", "free", "type", "enabled", "runtimes"});
    AgentView a;
    a.id = Get<std::string>(path, n, "id", "");
    a.pool = in.pool;
    a.slot_type = Get<std::string>(path, n, "type", "cpu");
    a.total_slots = Get<int>(path, n, "slots", 0);
    a.enabled = Get<bool>(path, n, "enabled", true);
    a.container_runtimes = Get<std::vector<std::string>>(path, n, "runtimes", {});
    if (a.id.empty() || a.total_slots <= 0) Fail(path, n, "an agent needs id and slots");
    if (n["free"]) {
      a.free_slots = Get<std::vector<int>>(path, n, "free", {});
      for (int slot : a.free_slots)
        if (busy[a.id].count(slot))
          Fail(path, n, "free slot " + std::to_string(slot) + " is held by a running one");
    } else {
      for (int slot = 0; slot < a.total_slots; ++slot)
        if (!busy[a.id].count(slot)) a.free_slots.push_back(slot);
    }
    in.agents.push_back(std::move(a));
  }

  index = 0;
  for (const auto& n : root["pending"]) {
    CheckKeys(path, n,
              {"id", "exp", "slots", "priority", "weight", "max_slots", "seq", "single_node", "avoid",
               "container"});
    PendingRequest r;
    r.allocation_id = Get<std::string>(path, n, "id", "");
    if (r.allocation_id.empty()) Fail(path, n, "a pending request needs an id");
    r.experiment_id = Get<int64_t>(path, n, "exp", 1);
    const auto& d = experiments[r.experiment_id];
    r.slots = Get<int>(path, n, "slots", 1);
    r.priority = Get<int>(path, n, "priority", d.priority);
    r.weight = Get<double>(path, n, "weight", d.weight);
    r.max_slots = n["max_slots"] ? std::optional<int>(Get<int>(path, n, "max_slots", 0)) : d.max_slots;
    r.queued_seq = Get<int64_t>(path, n, "seq", ++index);
    r.single_node = Get<bool>(path, n, "single_node", false);
    r.excluded_agents = Get<std::vector<std::string>>(path, n, "avoid", {});
    if (const YAML::Node c = n["container"]) {
      if (!c.IsMap()) Fail(path, c, "container is a map {runtime, cpu, cuda}");
      CheckKeys(path, c, {"runtime", "cpu", "cuda"});
      r.container = ContainerNeed{Get<std::string>(path, c, "runtime", ""), Get<bool>(path, c, "cpu", true),
                                  Get<bool>(path, c, "cuda", true)};
    }
    in.pending.push_back(std::move(r));
  }

  const YAML::Node expect = root["expect"];
  if (!expect) Fail(path, root, "a scenario needs `expect`");
  CheckKeys(path, expect, {"assign", "preempt", "reasons", "order"});
  for (const auto& kv : expect["assign"]) {
    try {
      s.assign[kv.first.as<std::string>()] = FormatPlacements(ParsePlacements(kv.second.as<std::string>()));
    } catch (const std::exception& e) {
      Fail(path, kv.second, e.what());
    }
  }
  s.preempt = Get<std::vector<std::string>>(path, expect, "preempt", {});
  s.reasons = Get<std::map<std::string, std::string>>(path, expect, "reasons", {});
  if (expect["order"]) s.order = Get<std::vector<std::string>>(path, expect, "order", {});
  return s;
}

std::vector<std::string> ScenarioFiles() {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(RING_SCHEDULER_SCENARIOS_DIR))
    if (entry.path().extension() == ".yaml") files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

std::string Show(const PoolDecision& d) {
  std::string out = "\n  assignments:";
  for (const auto& a : d.assignments)
    out += "\n    " + a.allocation_id + ": " + FormatPlacements(a.placements);
  out += "\n  preempt:";
  for (const auto& id : d.preempt) out += " " + id + " (for " + d.preempted_for.at(id) + ")";
  out += "\n  reasons:";
  for (const auto& [id, why] : d.pending_reasons) out += "\n    " + id + ": " + why;
  return out;
}

// What must hold for every input, whatever the policy.
void CheckInvariants(const PoolInput& in, const PoolDecision& d) {
  std::map<std::string, const PendingRequest*> pending;
  for (const auto& r : in.pending) pending[r.allocation_id] = &r;
  std::map<std::string, std::set<int>> free;
  std::map<std::string, bool> enabled;
  std::map<std::string, const AgentView*> views;
  for (const auto& a : in.agents) views[a.id] = &a;
  for (const auto& a : in.agents) {
    free[a.id].insert(a.free_slots.begin(), a.free_slots.end());
    enabled[a.id] = a.enabled;
  }
  std::set<std::string> assigned;
  for (const auto& a : d.assignments) {
    ASSERT_TRUE(pending.count(a.allocation_id)) << a.allocation_id << " is not pending";
    EXPECT_TRUE(assigned.insert(a.allocation_id).second) << a.allocation_id << " assigned twice";
    int slots = 0;
    std::set<int> sizes;
    for (const auto& p : a.placements) {
      EXPECT_TRUE(enabled[p.agent_id])
          << a.allocation_id << " placed on disabled or unknown agent " << p.agent_id;
      if (const auto& need = pending[a.allocation_id]->container; need && views.count(p.agent_id)) {
        EXPECT_TRUE(CanRunContainers(*views[p.agent_id], *need))
            << a.allocation_id << " runs in a container and was placed on " << p.agent_id
            << ", which cannot run it";
      }
      for (int s : p.slot_ids)
        EXPECT_EQ(free[p.agent_id].erase(s), 1u) << a.allocation_id << " got " << p.agent_id << ":" << s
                                                 << ", which is not free or was given twice";
      slots += static_cast<int>(p.slot_ids.size());
      sizes.insert(static_cast<int>(p.slot_ids.size()));
    }
    EXPECT_EQ(slots, pending[a.allocation_id]->slots)
        << a.allocation_id << " is a gang: all its slots or none";
    EXPECT_EQ(sizes.size(), 1u) << a.allocation_id << " spans agents unevenly";
    if (pending[a.allocation_id]->single_node) {
      EXPECT_EQ(a.placements.size(), 1u) << a.allocation_id << " is single-node: one agent only";
    }
  }
  for (const auto& r : in.pending) {
    const bool has_reason = d.pending_reasons.count(r.allocation_id) > 0;
    EXPECT_NE(assigned.count(r.allocation_id) > 0, has_reason)
        << r.allocation_id << ": exactly the requests not assigned have a reason";
    if (has_reason) {
      EXPECT_FALSE(d.pending_reasons.at(r.allocation_id).empty()) << r.allocation_id;
    }
  }
  std::vector<std::string> order = d.order, ids;
  for (const auto& r : in.pending) ids.push_back(r.allocation_id);
  std::sort(order.begin(), order.end());
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(order, ids) << "order lists every pending request once";
  std::set<std::string> preempted;
  for (const auto& id : d.preempt) {
    EXPECT_TRUE(preempted.insert(id).second) << id << " preempted twice";
    auto it = std::find_if(in.running.begin(), in.running.end(),
                           [&](const RunningAllocation& r) { return r.allocation_id == id; });
    ASSERT_NE(it, in.running.end()) << id << " is not running";
    EXPECT_TRUE(it->preemptible && !it->preempting) << id << " may not be preempted now";
    ASSERT_TRUE(d.preempted_for.count(id)) << id;
    EXPECT_TRUE(pending.count(d.preempted_for.at(id))) << id;
  }
  EXPECT_EQ(d.preempted_for.size(), d.preempt.size());
}

bool SameDecision(const PoolDecision& a, const PoolDecision& b) {
  if (a.assignments.size() != b.assignments.size()) return false;
  for (size_t i = 0; i < a.assignments.size(); ++i)
    if (a.assignments[i].allocation_id != b.assignments[i].allocation_id ||
        FormatPlacements(a.assignments[i].placements) != FormatPlacements(b.assignments[i].placements))
      return false;
  return a.preempt == b.preempt && a.preempted_for == b.preempted_for &&
         a.pending_reasons == b.pending_reasons && a.order == b.order;
}

class SchedulerScenarioTest : public ::testing::TestWithParam<std::string> {};

TEST_P(SchedulerScenarioTest, Decides) {
  Scenario s;
  try {
    s = Load(GetParam());
  } catch (const std::exception& e) {
    FAIL() << e.what();
  }
  SCOPED_TRACE(s.path + ": " + s.description);
  const PoolDecision d = SchedulePool(s.input);
  CheckInvariants(s.input, d);

  std::map<std::string, std::string> assigned;
  for (const auto& a : d.assignments) assigned[a.allocation_id] = FormatPlacements(a.placements);
  EXPECT_EQ(assigned, s.assign) << Show(d);
  EXPECT_EQ(d.preempt, s.preempt) << Show(d);
  for (const auto& [id, reason] : s.reasons) {
    auto it = d.pending_reasons.find(id);
    if (it == d.pending_reasons.end()) {
      ADD_FAILURE() << id << " has no pending reason" << Show(d);
    } else {
      EXPECT_EQ(it->second, reason) << "reason of " << id;
    }
  }
  if (s.order) {
    EXPECT_EQ(d.order, *s.order);
  }

  // The order of the input vectors means nothing.
  PoolInput reversed = s.input;
  std::reverse(reversed.agents.begin(), reversed.agents.end());
  std::reverse(reversed.pending.begin(), reversed.pending.end());
  std::reverse(reversed.running.begin(), reversed.running.end());
  for (auto& a : reversed.agents) std::reverse(a.free_slots.begin(), a.free_slots.end());
  EXPECT_TRUE(SameDecision(d, SchedulePool(reversed))) << "input order changed the decision" << Show(d);

  // A kept scheduler (pool_scheduler.h) decides the same on each of its
  // paths: a first pass, the last request arriving after a pass without it,
  // an extra request cancelled after a pass with it, no change, and the
  // vectors reversed.
  auto kept_decides = [&](PoolScheduler& kept, PoolInput given, const char* what) {
    EXPECT_TRUE(SameDecision(d, kept.Schedule(given))) << "the kept scheduler decided otherwise: " << what;
  };
  PoolScheduler kept;
  kept_decides(kept, s.input, "first pass");
  kept_decides(kept, s.input, "no change");
  kept_decides(kept, reversed, "vectors reversed");
  if (!s.input.pending.empty()) {
    PoolInput without_last = s.input;
    auto last = std::max_element(
        without_last.pending.begin(), without_last.pending.end(),
        [](const PendingRequest& a, const PendingRequest& b) { return a.queued_seq < b.queued_seq; });
    PendingRequest extra = *last;
    without_last.pending.erase(last);
    PoolScheduler arriving;
    PoolInput given = without_last;
    arriving.Schedule(given);
    kept_decides(arriving, s.input, "the last request arrives");
    PoolInput with_extra = s.input;
    extra.allocation_id += "-extra";
    extra.queued_seq += 1000;
    with_extra.pending.push_back(extra);
    PoolScheduler cancelling;
    given = with_extra;
    cancelling.Schedule(given);
    kept_decides(cancelling, s.input, "an extra request is cancelled");
  }
}

std::string TestName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = std::filesystem::path(info.param).stem().string();
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Scenarios, SchedulerScenarioTest, ::testing::ValuesIn(ScenarioFiles()), TestName);

TEST(SchedulerScenarioFilesTest, ThereAreEnoughOfThem) {
  EXPECT_GE(ScenarioFiles().size(), 25u);
}

}  // namespace
}  // namespace ring
