// One scheduling pass (SchedulePool) over a busy pool of 1,000 agents × 8
// slots with 100, 1,000 and 10,000 pending requests, for each policy. Prints
// the median and p90 pass time, the ratio to a peer measured in the same run
// (sorting the same queue by priority and arrival, the n log n that any
// priority scheduler pays), and the growth from one size to the next next to
// the growth of n log n.
//
//   ./build/bin/scheduler_bench [--agents N] [--quick]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "master/core/scheduler.h"

namespace {

using ring::AgentView;
using ring::PendingRequest;
using ring::PoolDecision;
using ring::PoolInput;
using ring::PoolPolicy;
using ring::RunningAllocation;
using Clock = std::chrono::steady_clock;

constexpr int kSlotsPerAgent = 8;
constexpr int kExperiments = 150;

struct Case {
  const char* name;
  PoolPolicy policy;
};

std::string AgentId(int i) {
  char id[16];
  std::snprintf(id, sizeof id, "agent-%04d", i);
  return id;
}

int PickSize(std::mt19937_64& rng, bool pending) {
  // Mostly small trials, some whole machines, a few two-machine gangs.
  const int roll = static_cast<int>(rng() % 100);
  if (roll < 45) return 1;
  if (roll < 75) return 2;
  if (roll < 88) return 4;
  if (roll < (pending ? 97 : 99)) return 8;
  return 16;
}

// An experiment's priority (1-99), weight (1-4) and max_slots (every fifth).
struct Settings {
  int priority;
  double weight;
  std::optional<int> max_slots;
};
Settings ExperimentSettings(int64_t e) {
  return {1 + static_cast<int>((e * 37) % 99), 1 + static_cast<double>(e % 4),
          e % 5 == 0 ? std::optional<int>(8 * (1 + static_cast<int>(e % 8))) : std::nullopt};
}

// A pool about 85% busy: running allocations of 1-16 slots packed onto the
// agents, with priorities, weights and max_slots from their experiment.
PoolInput BusyPool(int agents, std::mt19937_64& rng) {
  PoolInput in;
  in.pool = "bench";
  std::vector<int> used(agents, 0);
  int64_t seq = 0;
  const int target = agents * kSlotsPerAgent * 85 / 100;
  int busy = 0;
  for (int attempt = 0; busy < target && attempt < agents * 64; ++attempt) {
    const int size = PickSize(rng, false);
    const int e = 1 + static_cast<int>(rng() % kExperiments);
    RunningAllocation r;
    r.allocation_id = "run-" + std::to_string(seq);
    r.experiment_id = e;
    const Settings settings = ExperimentSettings(e);
    r.priority = settings.priority;
    r.weight = settings.weight;
    r.max_slots = settings.max_slots;
    r.started_seq = ++seq;
    r.preemptible = rng() % 20 != 0;
    if (size <= kSlotsPerAgent) {
      const int a = static_cast<int>(rng() % agents);
      if (used[a] + size > kSlotsPerAgent) continue;
      ring::Placement p{AgentId(a), {}};
      for (int s = 0; s < size; ++s) p.slot_ids.push_back(used[a]++);
      r.placements.push_back(std::move(p));
    } else {
      const int a = static_cast<int>(rng() % (agents - 1));
      if (used[a] != 0 || used[a + 1] != 0) continue;
      for (int k : {a, a + 1}) {
        ring::Placement p{AgentId(k), {}};
        for (int s = 0; s < kSlotsPerAgent; ++s) p.slot_ids.push_back(s);
        used[k] = kSlotsPerAgent;
        r.placements.push_back(std::move(p));
      }
    }
    r.slots = size;
    busy += size;
    in.running.push_back(std::move(r));
  }
  for (int a = 0; a < agents; ++a) {
    AgentView v;
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
    const int e = 1 + static_cast<int>(rng() % kExperiments);
    const Settings settings = ExperimentSettings(e);
    PendingRequest r;
    r.allocation_id = "pend-" + std::to_string(i);
    r.experiment_id = e;
    r.slots = PickSize(rng, true);
    r.priority = settings.priority;
    r.weight = settings.weight;
    r.max_slots = settings.max_slots;
    r.queued_seq = i + 1;
    in.pending.push_back(std::move(r));
  }
}

struct Timing {
  double median_ms = 0;
  double p90_ms = 0;
  int reps = 0;
};

template <typename F>
Timing Measure(F&& run, bool quick) {
  for (int i = 0; i < 2; ++i) run();  // warm up
  std::vector<double> ms;
  const auto start = Clock::now();
  const int min_reps = quick ? 5 : 21;
  const auto min_time = std::chrono::milliseconds(quick ? 100 : 1000);
  while (static_cast<int>(ms.size()) < min_reps || (Clock::now() - start < min_time && ms.size() < 201)) {
    const auto t0 = Clock::now();
    run();
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms[ms.size() * 9 / 10], static_cast<int>(ms.size())};
}

std::string Machine() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line, model = "unknown CPU";
  while (std::getline(cpuinfo, line))
    if (line.rfind("model name", 0) == 0) {
      model = line.substr(line.find(':') + 2);
      break;
    }
  return model + ", " + std::to_string(std::thread::hardware_concurrency()) + " cores";
}

double NLogN(double n) {
  return n * std::log2(n);
}

}  // namespace

int main(int argc, char** argv) {
  int agents = 1000;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick"))
      quick = true;
    else if (!std::strcmp(argv[i], "--agents") && i + 1 < argc)
      agents = std::max(2, std::atoi(argv[++i]));
    else {
      std::fprintf(stderr, "usage: %s [--agents N] [--quick]\n", argv[0]);
      return 2;
    }
  }
  const Case cases[] = {
      {"priority, best fit, preemption", {PoolPolicy::Type::kPriority, true, PoolPolicy::Fit::kBest}},
      {"priority, worst fit, preemption", {PoolPolicy::Type::kPriority, true, PoolPolicy::Fit::kWorst}},
      {"fair_share, best fit, preemption", {PoolPolicy::Type::kFairShare, true, PoolPolicy::Fit::kBest}},
  };
  const int sizes[] = {100, 1000, 10000};

  std::printf("Scheduler pass: %d agents x %d slots, about 85%% busy; machine: %s\n\n", agents,
              kSlotsPerAgent, Machine().c_str());
  std::printf(
      "| policy | pending | running | placed | preempted | waiting | median ms | p90 ms | "
      "peer (sort) ms | pass / peer | growth | n log n growth |\n");
  std::printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (const auto& c : cases) {
    double previous = 0;
    for (int i = 0; i < 3; ++i) {
      const int n = sizes[i];
      std::mt19937_64 rng(20261122);  // the same pool for every case
      PoolInput in = BusyPool(agents, rng);
      AddQueue(in, n, rng);
      in.policy = c.policy;

      PoolDecision d;
      const Timing pass = Measure([&] { d = ring::SchedulePool(in); }, quick);
      std::vector<PendingRequest> sorted;
      const Timing peer = Measure(
          [&] {
            sorted = in.pending;
            std::stable_sort(
                sorted.begin(), sorted.end(), [](const PendingRequest& a, const PendingRequest& b) {
                  return a.priority != b.priority ? a.priority < b.priority : a.queued_seq < b.queued_seq;
                });
          },
          quick);
      char growth[32] = "", nlogn[32] = "";
      if (previous > 0) {
        std::snprintf(growth, sizeof growth, "%.1fx", pass.median_ms / previous);
        std::snprintf(nlogn, sizeof nlogn, "%.1fx", NLogN(n) / NLogN(sizes[i - 1]));
      }
      previous = pass.median_ms;
      std::printf("| %s | %d | %zu | %zu | %zu | %zu | %.3f | %.3f | %.3f | %.1f | %s | %s |\n", c.name, n,
                  in.running.size(), d.assignments.size(), d.preempt.size(), d.pending_reasons.size(),
                  pass.median_ms, pass.p90_ms, peer.median_ms, pass.median_ms / peer.median_ms, growth,
                  nlogn);
      std::fflush(stdout);
    }
  }
  return 0;
}
