// One scheduling pass (SchedulePool) over a busy pool of agents x 8 slots,
// for each policy: 1,000 agents with 100 to 100,000 pending requests,
// and 10,000 agents with 1,000, 10,000 and 100,000. Prints the median and p90
// pass time, the ratio to a peer measured in the same run (sorting the same
// queue by priority and arrival, the n log n that any priority scheduler
// pays), the growth from one queue length to the next next to the growth of
// the peer and of n log n, the growth from 1,000 to 10,000 agents at the same
// queue length next to n log n of the agents, and what each pass decided.
//
//   ./build/bin/scheduler_bench [--agents N[,N...]] [--pending N[,N...]]
//                               [--policy priority-best|priority-worst|fair-share] [--quick]
//                               [--decisions] [--incremental]
//
// --agents and --pending pick the sizes (every queue length for every agent
// count); --policy and one size are for a profiler; --quick takes fewer
// repetitions; --decisions only schedules each case once and prints what it
// decided (to compare digests before and after a change); --incremental
// measures instead the pass of a kept PoolScheduler (pool_scheduler.h) after
// one event on the same pool (an allocation ends, a request arrives, a
// request is cancelled, nothing changes), at 10,000 and 100,000 pending
// requests unless --pending says otherwise, and checks that it decides what a
// full pass decides (the digests of both are printed; a difference fails
// the run). Inputs are built from a fixed seed, so every run
// schedules the same pool; each policy sees the same pool and queue. The digest of each decision (FNV-1a of
// every assignment, preemption, reason and the order) shows that a change to the scheduler left its decisions
// as they were.
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "master/scheduler/pool_scheduler.h"
#include "master/scheduler/scheduler.h"

#ifndef RING_BUILD_TYPE
#define RING_BUILD_TYPE "unknown"
#endif

namespace {

using ring::PendingRequest;
using ring::PoolDecision;
using ring::PoolInput;
using ring::PoolPolicy;
using ring::RunningAllocation;
using Clock = std::chrono::steady_clock;

constexpr int kSlotsPerAgent = 8;
constexpr int kExperiments = 150;
constexpr int kBusyPercent = 85;
constexpr uint64_t kSeed = 20261122;

// A pool size and the queue lengths measured on it.
struct Size {
  int agents;
  std::vector<int> pending;
};

struct Options {
  std::vector<Size> sizes{{1000, {100, 1000, 10000, 100000}}, {10000, {1000, 10000, 100000}}};
  std::string policy;  // empty: every policy
  bool quick = false;
  bool decisions_only = false;  // one untimed pass per case: the decisions table alone
  bool incremental = false;     // the kept scheduler after one event, instead of full passes
  bool pending_given = false;
};

struct Case {
  const char* name;
  const char* key;  // for --policy
  PoolPolicy policy;
};

// "1000,10000" -> {1000, 10000}; each at least `least`.
std::vector<int> ParseList(const char* text, int least) {
  std::vector<int> out;
  for (const char* p = text; *p;) {
    out.push_back(std::max(least, std::atoi(p)));
    while (*p && *p != ',') ++p;
    if (*p == ',') ++p;
  }
  return out;
}

std::optional<Options> ParseArgs(int argc, char** argv) {
  Options o;
  std::optional<std::vector<int>> agents, pending;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (!std::strcmp(argv[i], "--quick"))
      o.quick = true;
    else if (!std::strcmp(argv[i], "--decisions"))
      o.decisions_only = true;
    else if (!std::strcmp(argv[i], "--incremental"))
      o.incremental = true;
    else if (!std::strcmp(argv[i], "--agents") && has_value)
      agents = ParseList(argv[++i], 2);
    else if (!std::strcmp(argv[i], "--pending") && has_value)
      pending = ParseList(argv[++i], 1);
    else if (!std::strcmp(argv[i], "--policy") && has_value)
      o.policy = argv[++i];
    else
      return std::nullopt;
  }
  o.pending_given = pending.has_value();
  if (agents || pending) {
    // Named sizes: every queue length on every agent count; an agent count
    // alone keeps its default queue lengths (those of 1,000 agents for
    // another count).
    std::vector<Size> sizes;
    for (int a : agents.value_or(std::vector<int>{1000})) {
      std::vector<int> queue = pending.value_or(a >= 10000 ? o.sizes[1].pending : o.sizes[0].pending);
      sizes.push_back({a, std::move(queue)});
    }
    o.sizes = std::move(sizes);
  }
  return o;
}

// Mostly small trials, some whole machines, a few two-machine gangs.
int PickSize(std::mt19937_64& rng, bool pending) {
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

// A pool of `agents` agents (1% disabled) about kBusyPercent busy.
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

struct Timing {
  double median_ms = 0;
  double p90_ms = 0;
  double cpu_ms = 0;  // median CPU time of the thread: what other load on the machine moves least
};

double ThreadCpuMs() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

// Times `run()` after two warm-up calls: at least 15 and at most 31 times
// (5 to 9 with --quick), stopping after about a second once past the
// minimum. What `run` returns is destroyed outside the timed region.
template <typename F>
Timing Measure(F&& run, bool quick) {
  for (int i = 0; i < 2; ++i) run();
  const size_t min_reps = quick ? 5 : 15;
  const size_t max_reps = quick ? 9 : 31;
  std::vector<double> ms, cpu;
  const auto start = Clock::now();
  while (ms.size() < min_reps || (ms.size() < max_reps && Clock::now() - start < std::chrono::seconds(1))) {
    const double c0 = ThreadCpuMs();
    const auto t0 = Clock::now();
    const auto result = run();
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    cpu.push_back(ThreadCpuMs() - c0);
  }
  std::sort(ms.begin(), ms.end());
  std::sort(cpu.begin(), cpu.end());
  return {ms[ms.size() / 2], ms[ms.size() * 9 / 10], cpu[cpu.size() / 2]};
}

// The peer: the pending queue in priority order, copied and sorted.
std::vector<PendingRequest> SortQueue(const std::vector<PendingRequest>& pending) {
  std::vector<PendingRequest> sorted = pending;
  std::stable_sort(sorted.begin(), sorted.end(), [](const PendingRequest& a, const PendingRequest& b) {
    return a.priority != b.priority ? a.priority < b.priority : a.queued_seq < b.queued_seq;
  });
  return sorted;
}

// What one pass decided: placements, preemptions, and the pending reasons by
// kind.
struct Counts {
  size_t placed = 0, preempted = 0, waiting = 0, behind = 0, no_room = 0, max_slots = 0, at_share = 0,
         other = 0;
  uint64_t digest = 0;
};

// FNV-1a over everything a decision says, in its order: equal digests
// before and after a change to the scheduler mean the same decisions.
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

Counts Count(const PoolDecision& d) {
  Counts c;
  c.digest = Digest(d);
  c.placed = d.assignments.size();
  c.preempted = d.preempt.size();
  for (const auto& [id, reason] : d.pending_reasons) {
    auto has = [&](const char* text) { return reason.find(text) != std::string::npos; };
    if (has("waiting for preempted"))
      ++c.waiting;
    else if (reason.rfind("behind ", 0) == 0)
      ++c.behind;
    else if (has("max_slots"))
      ++c.max_slots;
    else if (has("fair share"))
      ++c.at_share;
    else if (has("on one agent") || has("whole idle"))
      ++c.no_room;
    else
      ++c.other;
  }
  return c;
}

std::string CpuModel() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown CPU";
}

int Processors() {
  cpu_set_t set;
  return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
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

struct Row {
  const Case* c;
  int agents;
  size_t running;
  int pending;
  Timing pass, peer;
  Counts counts;
};

void PrintTimes(const std::vector<Row>& rows) {
  std::printf(
      "| policy | agents | pending | median ms | p90 ms | CPU ms | peer ms | pass / peer | growth | peer "
      "growth | "
      "n log n growth |\n");
  std::printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    const Row* before =
        i > 0 && rows[i - 1].c == r.c && rows[i - 1].agents == r.agents ? &rows[i - 1] : nullptr;
    std::printf("| %s | %d | %d | %.2f | %.2f | %.2f | %.3f | %.1f | %s | %s | %s |\n", r.c->name, r.agents,
                r.pending, r.pass.median_ms, r.pass.p90_ms, r.pass.cpu_ms, r.peer.median_ms,
                r.pass.median_ms / r.peer.median_ms,
                Growth(r.pass.median_ms, before ? before->pass.median_ms : 0).c_str(),
                Growth(r.peer.median_ms, before ? before->peer.median_ms : 0).c_str(),
                Growth(NLogN(r.pending), before ? NLogN(before->pending) : 0).c_str());
  }
}

// The same policy and queue length on more agents: the pass's growth next to
// n log n of the agents (and of the running allocations, which grow with
// them), and the peer's, which sorts the same queue and so stays level.
void PrintAgentGrowth(const std::vector<Row>& rows) {
  std::vector<std::pair<const Row*, const Row*>> pairs;
  for (const Row& small : rows)
    for (const Row& large : rows)
      if (small.c == large.c && small.pending == large.pending && small.agents < large.agents)
        pairs.push_back({&small, &large});
  if (pairs.empty()) return;
  std::printf("\nGrowth with the agents, at the same queue length:\n\n");
  std::printf(
      "| policy | pending | agents | running | median ms | growth | n log n growth (agents) | "
      "pass / peer |\n");
  std::printf("| --- | ---: | --- | --- | --- | ---: | ---: | --- |\n");
  for (const auto& [a, b] : pairs)
    std::printf("| %s | %d | %d → %d | %zu → %zu | %.2f → %.2f | %s | %s | %.1f → %.1f |\n", a->c->name,
                a->pending, a->agents, b->agents, a->running, b->running, a->pass.median_ms,
                b->pass.median_ms, Growth(b->pass.median_ms, a->pass.median_ms).c_str(),
                Growth(NLogN(b->agents), NLogN(a->agents)).c_str(), a->pass.median_ms / a->peer.median_ms,
                b->pass.median_ms / b->peer.median_ms);
}

void PrintCounts(const std::vector<Row>& rows) {
  std::printf(
      "| policy | agents | pending | placed | preempted | waiting for preempted | behind holders | no room | "
      "max_slots | at share | other | digest |\n");
  std::printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n");
  for (const Row& r : rows) {
    const Counts& c = r.counts;
    std::printf("| %s | %d | %d | %zu | %zu | %zu | %zu | %zu | %zu | %zu | %zu | %016llx |\n", r.c->name,
                r.agents, r.pending, c.placed, c.preempted, c.waiting, c.behind, c.no_room, c.max_slots,
                c.at_share, c.other, static_cast<unsigned long long>(c.digest));
  }
}

// One event on the pool between two passes of a kept scheduler.
enum class Event { kAllocationEnds, kRequestArrives, kRequestCancelled, kNoChange };

const char* EventName(Event e) {
  switch (e) {
    case Event::kAllocationEnds:
      return "an allocation ends";
    case Event::kRequestArrives:
      return "a request arrives";
    case Event::kRequestCancelled:
      return "a request is cancelled";
    case Event::kNoChange:
      return "nothing changed";
  }
  return "";
}

const char* PathName(ring::PoolScheduler::Path p) {
  switch (p) {
    case ring::PoolScheduler::Path::kFull:
      return "full";
    case ring::PoolScheduler::Path::kUnchanged:
      return "unchanged";
    case ring::PoolScheduler::Path::kQueue:
      return "queue only";
  }
  return "";
}

// The pool after one typical event: the running allocation in the middle of
// the list (not stopping) ends and frees its slots; a one-slot request of
// experiment 7 arrives at the back of the queue; the request in the middle
// of the queue is cancelled.
PoolInput AfterEvent(const PoolInput& before, Event e) {
  PoolInput in = before;
  switch (e) {
    case Event::kAllocationEnds: {
      size_t i = in.running.size() / 2;
      while (in.running[i].preempting) ++i;
      for (const auto& p : in.running[i].placements)
        for (auto& a : in.agents)
          if (a.id == p.agent_id) {
            a.free_slots.insert(a.free_slots.end(), p.slot_ids.begin(), p.slot_ids.end());
            std::sort(a.free_slots.begin(), a.free_slots.end());
          }
      in.running.erase(in.running.begin() + static_cast<std::ptrdiff_t>(i));
      break;
    }
    case Event::kRequestArrives: {
      PendingRequest r;
      r.allocation_id = "pend-arrived";
      r.experiment_id = 7;
      const Settings settings = ExperimentSettings(r.experiment_id);
      r.priority = settings.priority;
      r.weight = settings.weight;
      r.max_slots = settings.max_slots;
      r.queued_seq = static_cast<int64_t>(in.pending.size()) + 1;
      in.pending.push_back(std::move(r));
      break;
    }
    case Event::kRequestCancelled:
      in.pending.erase(in.pending.begin() + static_cast<std::ptrdiff_t>(in.pending.size() / 2));
      break;
    case Event::kNoChange:
      break;
  }
  return in;
}

struct IncrementalRow {
  const Case* c;
  int agents;
  int pending;
  Event event;
  ring::PoolScheduler::Path path;
  Timing pass;
  Timing full;  // SchedulePool on the same input
  uint64_t digest = 0, full_digest = 0;
};

// A kept scheduler that has decided `before` gets `after`: the pass timed.
// Between repetitions (untimed) it goes back to `before`. Copies of the
// inputs are made, and what the pass hands back is freed, outside the
// timed region. Exits when the kept scheduler decides otherwise than a full
// pass.
IncrementalRow MeasureEvent(const Case& c, int agents, const PoolInput& before, Event e, bool quick) {
  IncrementalRow row{&c, agents, static_cast<int>(before.pending.size()), e, {}, {}, {}, 0, 0};
  const PoolInput after = AfterEvent(before, e);
  row.full = Measure([&] { return ring::SchedulePool(after); }, quick);
  row.full_digest = Digest(ring::SchedulePool(after));
  ring::PoolScheduler kept;
  {
    PoolInput in = before;
    kept.Schedule(in);
  }
  const size_t min_reps = quick ? 5 : 15;
  const size_t max_reps = quick ? 9 : 31;
  std::vector<double> ms, cpu;
  const auto start = Clock::now();
  for (size_t rep = 0;
       rep < min_reps + 2 || (rep < max_reps + 2 && Clock::now() - start < std::chrono::seconds(1)); ++rep) {
    PoolInput in = after;
    const double c0 = ThreadCpuMs();
    const auto t0 = Clock::now();
    const PoolDecision& d = kept.Schedule(in);
    const double wall = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    const double used = ThreadCpuMs() - c0;
    if (rep >= 2) {
      ms.push_back(wall);
      cpu.push_back(used);
    }
    row.path = kept.last_path();
    if (rep == 0 || rep == 2) {
      row.digest = Digest(d);
      if (row.digest != row.full_digest) {
        std::fprintf(stderr,
                     "FAIL: %s, %d agents, %d pending, %s: the kept scheduler decided %016llx, a full pass "
                     "%016llx\n",
                     c.name, agents, row.pending, EventName(e), static_cast<unsigned long long>(row.digest),
                     static_cast<unsigned long long>(row.full_digest));
        std::exit(1);
      }
    }
    PoolInput back = before;
    kept.Schedule(back);
  }
  std::sort(ms.begin(), ms.end());
  std::sort(cpu.begin(), cpu.end());
  row.pass = {ms[ms.size() / 2], ms[ms.size() * 9 / 10], cpu[cpu.size() / 2]};
  return row;
}

void PrintIncremental(const std::vector<IncrementalRow>& rows) {
  std::printf(
      "| policy | agents | pending | event | path | median ms | p90 ms | CPU ms | full pass ms | full / kept "
      "| "
      "digest | full pass digest |\n");
  std::printf("| --- | ---: | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- |\n");
  for (const auto& r : rows)
    std::printf("| %s | %d | %d | %s | %s | %.2f | %.2f | %.2f | %.2f | %.1f | %016llx | %016llx |\n",
                r.c->name, r.agents, r.pending, EventName(r.event), PathName(r.path), r.pass.median_ms,
                r.pass.p90_ms, r.pass.cpu_ms, r.full.median_ms, r.full.median_ms / r.pass.median_ms,
                static_cast<unsigned long long>(r.digest), static_cast<unsigned long long>(r.full_digest));
  std::vector<std::pair<const IncrementalRow*, const IncrementalRow*>> pairs;
  for (const auto& small : rows)
    for (const auto& large : rows)
      if (small.c == large.c && small.event == large.event && small.pending == large.pending &&
          small.agents < large.agents)
        pairs.push_back({&small, &large});
  if (pairs.empty()) return;
  std::printf("\nGrowth with the agents, at the same queue length:\n\n");
  std::printf("| policy | pending | event | agents | median ms | growth | n log n growth (agents) |\n");
  std::printf("| --- | ---: | --- | --- | --- | ---: | ---: |\n");
  for (const auto& [a, b] : pairs)
    std::printf("| %s | %d | %s | %d → %d | %.2f → %.2f | %s | %s |\n", a->c->name, a->pending,
                EventName(a->event), a->agents, b->agents, a->pass.median_ms, b->pass.median_ms,
                Growth(b->pass.median_ms, a->pass.median_ms).c_str(),
                Growth(NLogN(b->agents), NLogN(a->agents)).c_str());
}

std::string Command(int argc, char** argv) {
  std::string out = argv[0];
  for (int i = 1; i < argc; ++i) out += std::string(" ") + argv[i];
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const auto options = ParseArgs(argc, argv);
  if (!options) {
    std::fprintf(
        stderr,
        "usage: %s [--agents N[,N...]] [--pending N[,N...]] "
        "[--policy priority-best|priority-worst|fair-share] [--quick] [--decisions] [--incremental]\n",
        argv[0]);
    return 2;
  }
  const Case all_cases[] = {
      {"priority, best fit, preemption",
       "priority-best",
       {PoolPolicy::Type::kPriority, true, PoolPolicy::Fit::kBest}},
      {"priority, worst fit, preemption",
       "priority-worst",
       {PoolPolicy::Type::kPriority, true, PoolPolicy::Fit::kWorst}},
      {"fair_share, best fit, preemption",
       "fair-share",
       {PoolPolicy::Type::kFairShare, true, PoolPolicy::Fit::kBest}},
  };
  std::vector<const Case*> cases;
  for (const Case& c : all_cases)
    if (options->policy.empty() || options->policy == c.key) cases.push_back(&c);
  if (cases.empty()) {
    std::fprintf(stderr, "%s: no policy %s\n", argv[0], options->policy.c_str());
    return 2;
  }

  std::printf("Command: %s\n", Command(argc, argv).c_str());
  std::printf("Machine: %s, %d processors; build type %s\n", CpuModel().c_str(), Processors(),
              RING_BUILD_TYPE);
  if (options->incremental) {
    std::vector<IncrementalRow> rows;
    for (const Size& size : options->sizes) {
      const std::vector<int> queues = options->pending_given ? size.pending : std::vector<int>{10000, 100000};
      for (int n : queues) {
        std::mt19937_64 rng(kSeed);
        PoolInput in = BusyPool(size.agents, rng);
        AddQueue(in, n, rng);
        std::printf("Pool: %d agents x %d slots, %zu running allocations, %d pending\n", size.agents,
                    kSlotsPerAgent, in.running.size(), n);
        for (const Case* c : cases) {
          in.policy = c->policy;
          for (Event e :
               {Event::kAllocationEnds, Event::kRequestArrives, Event::kRequestCancelled, Event::kNoChange}) {
            rows.push_back(MeasureEvent(*c, size.agents, in, e, options->quick));
            std::fprintf(stderr, "measured %s, %d agents, %d pending, %s: %.2f ms (%s)\n", c->name,
                         size.agents, n, EventName(e), rows.back().pass.median_ms,
                         PathName(rows.back().path));
          }
        }
      }
    }
    std::stable_sort(rows.begin(), rows.end(), [](const IncrementalRow& a, const IncrementalRow& b) {
      if (a.c != b.c) return a.c < b.c;
      if (a.pending != b.pending) return a.pending < b.pending;
      return a.agents < b.agents;
    });
    std::printf("\n");
    PrintIncremental(rows);
    return 0;
  }
  std::vector<Row> rows;
  for (const Size& size : options->sizes) {
    std::vector<PoolInput> inputs;  // one per queue length, the same pool in each
    for (int n : size.pending) {
      std::mt19937_64 rng(kSeed);
      inputs.push_back(BusyPool(size.agents, rng));
      AddQueue(inputs.back(), n, rng);
    }
    std::printf("Pool: %d agents x %d slots, %zu running allocations (about %d%% busy), %d experiments\n",
                size.agents, kSlotsPerAgent, inputs.front().running.size(), kBusyPercent, kExperiments);
    for (const Case* c : cases) {
      for (PoolInput& in : inputs) {
        in.policy = c->policy;
        Row row{c, size.agents, in.running.size(), static_cast<int>(in.pending.size()), {}, {}, {}};
        if (!options->decisions_only) {
          row.pass = Measure([&] { return ring::SchedulePool(in); }, options->quick);
          row.peer = Measure([&] { return SortQueue(in.pending); }, options->quick);
        }
        row.counts = Count(ring::SchedulePool(in));
        rows.push_back(row);
        std::fprintf(stderr, "measured %s, %d agents, %d pending: %.2f ms\n", c->name, size.agents,
                     row.pending, row.pass.median_ms);
      }
    }
  }
  // Rows by policy, then agents, then queue length.
  std::stable_sort(rows.begin(), rows.end(),
                   [](const Row& a, const Row& b) { return a.c != b.c ? a.c < b.c : a.agents < b.agents; });
  std::printf("\n");
  if (!options->decisions_only) {
    PrintTimes(rows);
    PrintAgentGrowth(rows);
  }
  std::printf(
      "\nDecisions of one pass (pending requests not placed, by reason; the digest of all it decided):\n\n");
  PrintCounts(rows);
  return 0;
}
