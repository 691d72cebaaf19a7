// scheduler_bench --incremental: the pass of a kept PoolScheduler
// (pool_scheduler.h) after one event on the pool, next to SchedulePool on
// the same input, whose digests must agree.
#include "bench/scheduler_bench_incremental.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "master/scheduler/pool_scheduler.h"

namespace ring::scheduler_bench {
namespace {

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

const char* PathName(PoolScheduler::Path p) {
  switch (p) {
    case PoolScheduler::Path::kFull:
      return "full";
    case PoolScheduler::Path::kUnchanged:
      return "unchanged";
    case PoolScheduler::Path::kQueue:
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
  PoolScheduler::Path path;
  Timing pass;
  Timing full;  // SchedulePool on the same input
  uint64_t digest = 0, full_digest = 0;
};

// A kept scheduler that has decided `before` gets `after`: the pass timed.
// Before each repetition (untimed) it decides `before` again. Copies of the
// inputs are made, and what the pass hands back is freed, outside the
// timed region. Exits when the kept scheduler decides otherwise than a full
// pass.
IncrementalRow MeasureEvent(const Case& c, int agents, const PoolInput& before, Event e, bool quick) {
  IncrementalRow row{&c, agents, static_cast<int>(before.pending.size()), e, {}, {}, {}, 0, 0};
  const PoolInput after = AfterEvent(before, e);
  row.full = Measure([&] { return SchedulePool(after); }, quick);
  row.full_digest = Digest(SchedulePool(after));
  PoolScheduler kept;
  row.pass = MeasureEach(
      [&] {
        PoolInput back = before;  // the kept scheduler decides the pool before the event
        kept.Schedule(back);
        return after;
      },
      [&](PoolInput& in) { return &kept.Schedule(in); },
      [&](size_t call, const PoolDecision* d) {
        row.path = kept.last_path();
        if (call != 0 && call != 2) return;
        row.digest = Digest(*d);
        if (row.digest == row.full_digest) return;
        std::fprintf(stderr,
                     "FAIL: %s, %d agents, %d pending, %s: the kept scheduler decided %016llx, a full pass "
                     "%016llx\n",
                     c.name, agents, row.pending, EventName(e), static_cast<unsigned long long>(row.digest),
                     static_cast<unsigned long long>(row.full_digest));
        std::exit(1);
      },
      quick);
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

}  // namespace

void RunIncremental(const std::vector<const Case*>& cases, const std::vector<Size>& sizes, bool pending_given,
                    bool quick) {
  std::vector<IncrementalRow> rows;
  for (const Size& size : sizes) {
    const std::vector<int> queues = pending_given ? size.pending : std::vector<int>{10000, 100000};
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
          rows.push_back(MeasureEvent(*c, size.agents, in, e, quick));
          std::fprintf(stderr, "measured %s, %d agents, %d pending, %s: %.2f ms (%s)\n", c->name, size.agents,
                       n, EventName(e), rows.back().pass.median_ms, PathName(rows.back().path));
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
}

}  // namespace ring::scheduler_bench
