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

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "bench/scheduler_bench_incremental.h"
#include "bench/scheduler_bench_pool.h"
#include "master/scheduler/scheduler.h"

#ifndef RING_BUILD_TYPE
#define RING_BUILD_TYPE "unknown"
#endif

namespace {

using namespace ring::scheduler_bench;
using ring::PendingRequest;
using ring::PoolDecision;
using ring::PoolInput;
using ring::PoolPolicy;

struct Options {
  std::vector<Size> sizes{{1000, {100, 1000, 10000, 100000}}, {10000, {1000, 10000, 100000}}};
  std::string policy;  // empty: every policy
  bool quick = false;
  bool decisions_only = false;  // one untimed pass per case: the decisions table alone
  bool incremental = false;     // the kept scheduler after one event, instead of full passes
  bool pending_given = false;
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
    RunIncremental(cases, options->sizes, options->pending_given, options->quick);
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
