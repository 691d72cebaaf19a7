#!/usr/bin/env python3
"""bench/scale_trace.sh's report: the open loop's stalls against the scheduler trace.

  stall_report.py WORK MASTER_PID AGENTS RATE

WORK holds sched.txt (perf script -F cpu,time,trace of sched_switch on the
monotonic clock), open-<tag>.trace ("due_ms latency_ms" per answer),
open-<tag>.err (rest_open_loop's JSON, with window_opened_monotonic_s) and
open-<tag>.steal (the host's steal in ms) for the tags "peer" and "agents".
The master runs on core 0, its agent thread and the load generators on core 1.
"""
import collections
import json
import os
import re
import sys

MASTER_CORE = 0
SLOW_MS = 5.0  # an answer slower than this is part of a stall
STALL_ANSWERS = 10  # a stall has at least this many, no more than 5 ms of due time apart
RUN_MS = 2.0  # a run of another task on the master's core this long is an interference
DRAIN_S = 0.030  # answers this long after such a run are not clear of it

SWITCH = re.compile(r"\s*\[(\d+)\]\s+([\d.]+):\s+prev_comm=(.*?) prev_pid=(\d+) .*==> "
                    r"next_comm=(.*?) next_pid=(\d+)")


def runs(path):
    """Each task's runs on each core: (core, start, end, comm, tid)."""
    running, out = {}, []
    with open(path) as f:
        for line in f:
            m = SWITCH.match(line)
            if not m:
                continue
            core, t = int(m.group(1)), float(m.group(2))
            if core in running:
                start, comm, tid = running[core]
                out.append((core, start, t, comm, tid))
            running[core] = (t, m.group(5), int(m.group(6)))
    return out


def percentile(values, q):
    return values[int(q * (len(values) - 1))] if values else 0.0


def threads_of(pid):
    return {int(t) for t in os.listdir(f"/proc/{pid}/task")}


def stalls(answers):
    out, cur = [], None
    for due, ms in sorted(answers):
        if ms <= SLOW_MS:
            continue
        if cur and due - cur[1] < 5:
            cur[1], cur[2], cur[3] = due, max(cur[2], ms), cur[3] + 1
        else:
            if cur:
                out.append(cur)
            cur = [due, due, ms, 1]
    if cur:
        out.append(cur)
    return [s for s in out if s[3] >= STALL_ANSWERS]


def report(work, tag, all_runs, ours):
    opened = json.loads(open(f"{work}/open-{tag}.err").read().splitlines()[-1])["window_opened_monotonic_s"]
    answers = [tuple(map(float, line.split())) for line in open(f"{work}/open-{tag}.trace") if line.strip()]
    steal = open(f"{work}/open-{tag}.steal").read().strip()
    end = opened + max(d + ms for d, ms in answers) / 1000
    window = [r for r in all_runs if r[2] >= opened and r[1] <= end]
    others = [r for r in window if r[0] == MASTER_CORE and r[4] != 0 and r[4] not in ours
              and (r[2] - r[1]) * 1000 >= RUN_MS]
    lat = sorted(ms for _, ms in answers)
    clear = sorted(ms for due, ms in answers
                   if not any(opened + (due + ms) / 1000 >= a and opened + due / 1000 <= b + DRAIN_S
                              for _, a, b, _, _ in others))
    by_task = collections.Counter()
    for _, a, b, comm, tid in others:
        by_task[f"{comm}/{tid}"] += (b - a) * 1000
    print(f"\n{tag}: {len(answers)} answers, p99 {percentile(lat, 0.99):.2f} ms, p99.9 "
          f"{percentile(lat, 0.999):.2f} ms, max {lat[-1]:.2f} ms; the host's steal {steal} ms.")
    print(f"  Runs of {RUN_MS:.0f} ms or more on the master's core by tasks not the master's: "
          + (", ".join(f"{k} {v:.1f} ms" for k, v in by_task.most_common(5)) or "none") + ".")
    print(f"  Answers clear of them (and of the {DRAIN_S * 1000:.0f} ms after each): {len(clear)} of "
          f"{len(answers)}, p99 {percentile(clear, 0.99):.2f} ms, p99.9 {percentile(clear, 0.999):.2f} ms.")
    for first, last, worst, n in stalls(answers):
        a, b = opened + first / 1000 - 0.005, opened + (last + worst) / 1000
        print(f"  Stall: due {first:.0f}-{last:.0f} ms, {n} answers, worst {worst:.1f} ms; "
              f"{(b - a) * 1000:.0f} ms from 5 ms before the first to the last answer:")
        for core in (0, 1):
            busy = collections.Counter()
            for c, s, e, comm, tid in window:
                if c == core and e >= a and s <= b:
                    busy[f"{comm}/{tid}"] += (min(e, b) - max(s, a)) * 1000
            print(f"    core {core}: " + ", ".join(f"{k} {v:.1f} ms" for k, v in busy.most_common(5)))
    return percentile(lat, 0.99), percentile(clear, 0.99)


def main():
    work, master, agents, rate = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    all_runs = runs(f"{work}/sched.txt")
    ours = threads_of(master)
    print(f"Open loop at {rate} requests/s on 200 connections; the master (pid {master}) on core "
          f"{MASTER_CORE} (its agent thread with the load on core 1); {agents} agents in the second window.")
    peer = report(work, "peer", all_runs, ours)
    with_agents = report(work, "agents", all_runs, ours)
    print(f"\nThe p99 with the agents against without: {with_agents[0] / peer[0]:.2f}× over every answer, "
          f"{with_agents[1] / peer[1]:.2f}× over the answers clear of other tasks on the master's core.")


if __name__ == "__main__":
    main()
