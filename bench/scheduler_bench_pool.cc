#include "bench/scheduler_bench_pool.h"

#include <time.h>

#include <cmath>
#include <cstdio>

namespace ring::scheduler_bench {
namespace {

// Mostly small trials, some whole machines, a few two-machine gangs.
int PickSize(std::mt19937_64& rng, bool pending) {
  const int roll = static_cast<int>(rng() % 100);
  if (roll < 45) return 1;
  if (roll < 75) return 2;
  if (roll < 88) return 4;
  if (roll < (pending ? 97 : 99)) return 8;
  return 16;
}

// Zero padded to one width per pool, so ids sort as their numbers do.
std::string AgentId(int i) {
  char id[32];
  std::snprintf(id, sizeof id, "agent-%05d", i);
  return id;
}

// Places a running allocation of `size` slots on a random agent with room
// (or two idle neighbours for 16 slots); false if the one tried is too full.
bool Place(RunningAllocation& r, int size, int agents, std::vector<int>& used, std::mt19937_64& rng) {
  if (size <= kSlotsPerAgent) {
    const int a = static_cast<int>(rng() % agents);
    if (used[a] + size > kSlotsPerAgent) return false;
    ring::Placement p{AgentId(a), {}};
    for (int s = 0; s < size; ++s) p.slot_ids.push_back(used[a]++);
    r.placements.push_back(std::move(p));
    return true;
  }
  const int a = static_cast<int>(rng() % (agents - 1));
  if (used[a] != 0 || used[a + 1] != 0) return false;
  for (int k : {a, a + 1}) {
    ring::Placement p{AgentId(k), {}};
    for (int s = 0; s < kSlotsPerAgent; ++s) p.slot_ids.push_back(s);
    used[k] = kSlotsPerAgent;
    r.placements.push_back(std::move(p));
  }
  return true;
}

// Running allocations of 1-16 slots filling about kBusyPercent of the pool;
// 5% not preemptible, 1% already asked to stop. `used` gets each agent's
// busy slots (the lowest slot ids).
std::vector<RunningAllocation> RunningMix(int agents, std::vector<int>& used, std::mt19937_64& rng) {
  std::vector<RunningAllocation> running;
  const int target = agents * kSlotsPerAgent * kBusyPercent / 100;
  int busy = 0;
  for (int attempt = 0; busy < target && attempt < agents * 64; ++attempt) {
    const int size = PickSize(rng, false);
    RunningAllocation r;
    r.experiment_id = 1 + static_cast<int64_t>(rng() % kExperiments);
    if (!Place(r, size, agents, used, rng)) continue;
    const Settings settings = ExperimentSettings(r.experiment_id);
    r.allocation_id = "run-" + std::to_string(running.size());
    r.slots = size;
    r.priority = settings.priority;
    r.weight = settings.weight;
    r.max_slots = settings.max_slots;
    r.started_seq = static_cast<int64_t>(running.size()) + 1;
    r.preemptible = rng() % 20 != 0;
    r.preempting = rng() % 100 == 0;
    busy += size;
    running.push_back(std::move(r));
  }
  return running;
}

}  // namespace

Settings ExperimentSettings(int64_t e) {
  return {1 + static_cast<int>((e * 37) % 99), 1 + static_cast<double>(e % 4),
          e % 5 == 0 ? std::optional<int>(8 * (1 + static_cast<int>(e % 8))) : std::nullopt};
}

PoolInput BusyPool(int agents, std::mt19937_64& rng) {
  PoolInput in;
  in.pool = "bench";
  std::vector<int> used(agents, 0);
  in.running = RunningMix(agents, used, rng);
  for (int a = 0; a < agents; ++a) {
    ring::AgentView v;
    v.id = AgentId(a);
    v.pool = in.pool;
    v.slot_type = "cpu";
    v.total_slots = kSlotsPerAgent;
    v.enabled = rng() % 100 != 0;
    for (int s = used[a]; s < kSlotsPerAgent; ++s) v.free_slots.push_back(s);
    in.agents.push_back(std::move(v));
  }
  return in;
}

void AddQueue(PoolInput& in, int pending, std::mt19937_64& rng) {
  for (int i = 0; i < pending; ++i) {
    PendingRequest r;
    r.allocation_id = "pend-" + std::to_string(i);
    r.experiment_id = 1 + static_cast<int64_t>(rng() % kExperiments);
    const Settings settings = ExperimentSettings(r.experiment_id);
    r.slots = PickSize(rng, true);
    r.priority = settings.priority;
    r.weight = settings.weight;
    r.max_slots = settings.max_slots;
    r.queued_seq = i + 1;
    in.pending.push_back(std::move(r));
  }
}

double ThreadCpuMs() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

Timing Summarize(std::vector<double> ms, std::vector<double> cpu) {
  std::sort(ms.begin(), ms.end());
  std::sort(cpu.begin(), cpu.end());
  return {ms[ms.size() / 2], ms[ms.size() * 9 / 10], cpu[cpu.size() / 2]};
}

uint64_t Digest(const PoolDecision& d) {
  uint64_t h = 1469598103934665603ull;
  auto add = [&](const std::string& text) {
    for (unsigned char ch : text) h = (h ^ ch) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;  // a separator, so "ab","c" differs from "a","bc"
  };
  for (const auto& a : d.assignments) {
    add(a.allocation_id);
    for (const auto& p : a.placements) {
      add(p.agent_id);
      for (int s : p.slot_ids) add(std::to_string(s));
    }
  }
  for (const auto& v : d.preempt) add(v);
  for (const auto& [victim, for_id] : d.preempted_for) add(victim + ">" + for_id);
  for (const auto& [id, reason] : d.pending_reasons) add(id + ":" + reason);
  for (const auto& id : d.order) add(id);
  return h;
}

double NLogN(double n) {
  return n * std::log2(n);
}

std::string Growth(double now, double before) {
  if (before <= 0) return "";
  char text[16];
  std::snprintf(text, sizeof text, "%.1fx", now / before);
  return text;
}

}  // namespace ring::scheduler_bench
