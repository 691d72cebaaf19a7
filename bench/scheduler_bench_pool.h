#pragma once
// What scheduler_bench measures on: a busy pool of agents x 8 slots and a
// queue, built from a fixed seed, the timing of repeated passes, and the
// digest of a decision. Shared by the full-pass tables (scheduler_bench.cc)
// and the kept scheduler's (scheduler_bench_incremental.cc).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "master/scheduler/scheduler.h"

namespace ring::scheduler_bench {

using Clock = std::chrono::steady_clock;

inline constexpr int kSlotsPerAgent = 8;
inline constexpr int kExperiments = 150;
inline constexpr int kBusyPercent = 85;
inline constexpr uint64_t kSeed = 20261122;

// A pool size and the queue lengths measured on it.
struct Size {
  int agents;
  std::vector<int> pending;
};

struct Case {
  const char* name;
  const char* key;  // for --policy
  PoolPolicy policy;
};

// An experiment's priority (1-99), weight (1-4) and max_slots (every fifth).
struct Settings {
  int priority;
  double weight;
  std::optional<int> max_slots;
};
Settings ExperimentSettings(int64_t e);

// A pool of `agents` agents (1% disabled) about kBusyPercent busy.
PoolInput BusyPool(int agents, std::mt19937_64& rng);
// `pending` requests of mostly 1 or 2 slots from kExperiments experiments.
void AddQueue(PoolInput& in, int pending, std::mt19937_64& rng);

struct Timing {
  double median_ms = 0;
  double p90_ms = 0;
  double cpu_ms = 0;  // median CPU time of the thread: what other load on the machine moves least
};

double ThreadCpuMs();
// Median and p90 of `ms`, median of `cpu`.
Timing Summarize(std::vector<double> ms, std::vector<double> cpu);

// Times `run(prepare())` after two warm-up calls: at least 15 and at most 31
// times (5 to 9 with `quick`), stopping after about a second once past the
// minimum. `prepare` (untimed) makes each call's input; what `run` returns
// is destroyed outside the timed region, after `check(call, result)`
// (call 0 and 1 are the warm-ups).
template <typename Prepare, typename Run, typename Check>
Timing MeasureEach(Prepare&& prepare, Run&& run, Check&& check, bool quick) {
  const size_t min_reps = quick ? 5 : 15;
  const size_t max_reps = quick ? 9 : 31;
  std::vector<double> ms, cpu;
  const auto start = Clock::now();
  for (size_t call = 0;
       call < min_reps + 2 || (call < max_reps + 2 && Clock::now() - start < std::chrono::seconds(1));
       ++call) {
    auto input = prepare();
    const double c0 = ThreadCpuMs();
    const auto t0 = Clock::now();
    const auto result = run(input);
    const double wall = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    const double used = ThreadCpuMs() - c0;
    if (call >= 2) {
      ms.push_back(wall);
      cpu.push_back(used);
    }
    check(call, result);
  }
  return Summarize(std::move(ms), std::move(cpu));
}

// MeasureEach of `run()` alone.
template <typename F>
Timing Measure(F&& run, bool quick) {
  return MeasureEach([] { return 0; }, [&](int) { return run(); }, [](size_t, const auto&) {}, quick);
}

// FNV-1a over everything a decision says, in its order: equal digests
// before and after a change to the scheduler mean the same decisions.
uint64_t Digest(const PoolDecision& d);

double NLogN(double n);
// "1.5x", now over before; "" without a before.
std::string Growth(double now, double before);

}  // namespace ring::scheduler_bench
