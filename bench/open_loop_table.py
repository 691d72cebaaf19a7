#!/usr/bin/env python3
"""The open-loop windows of bench/scale.sh as a Markdown table, or the summary.

  open_loop_table.py [--summary] WORK AGENTS RATE

WORK/open-rows has one line per window ("tag master_cpu% load_cpu% achieved
p50 p99 p999 max non2xx errors send_lag_p99 steal_ms elapsed_s cores", tags
"peer-N" and "agents-N"); WORK/open-<tag>.trace one "due_ms latency_ms" per
answer. The goal is judged on the median of the windows' p99s each way, over
every window and over the quiet ones (the host's steal at most QUIET of the
cores' time); the p99 of all the windows' answers together is given beside.
"""
import statistics
import sys

QUIET = 0.02  # a window is quiet when the host took at most this share of the cores' time


def percentile(sorted_values, q):  # as rest_open_loop computes it
    if not sorted_values:
        return 0.0
    return sorted_values[int(q * (len(sorted_values) - 1))]


def load(work):
    rows = []
    with open(f"{work}/open-rows") as f:
        for line in f:
            v = line.split()
            rows.append({"tag": v[0], "cpu": v[1], "load_cpu": v[2], "achieved": v[3], "p50": float(v[4]),
                         "p99": float(v[5]), "p999": float(v[6]), "max": float(v[7]), "lag": v[10],
                         "steal": int(v[11]), "steal_share": int(v[11]) / (float(v[12]) * 1000 * int(v[13]))})
    return rows


def pooled(work, rows, kind):
    latencies = []
    for r in rows:
        if r["tag"].startswith(kind + "-"):
            with open(f"{work}/open-{r['tag']}.trace") as f:
                latencies.extend(float(line.split()[1]) for line in f if line.strip())
    latencies.sort()
    return {q: percentile(latencies, q) for q in (0.5, 0.99, 0.999)}


def table(work, agents, rate):
    rows = load(work)
    print("| master with (open loop) | window | offered requests/s | achieved requests/s | p50 ms | p99 ms "
          "| p99.9 ms | max ms | generator's own send delay p99 ms | master CPU (% of a core) "
          "| simulator CPU (% of a core) | host's steal ms (% of the cores) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        kind, n = r["tag"].split("-")
        who = "no agents (the peer)" if kind == "peer" else f"{agents} agents heartbeating"
        load_cpu = "-" if kind == "peer" else r["load_cpu"]
        print(f"| {who} | {n} | {rate} | {r['achieved']} | {r['p50']:.2f} | {r['p99']:.2f} | {r['p999']:.2f} "
              f"| {r['max']:.2f} | {r['lag']} | {r['cpu']} | {load_cpu} | {r['steal']} ({100 * r['steal_share']:.1f}%) |")


def ratios(kind_rows):
    p99 = {k: [r["p99"] for r in v] for k, v in kind_rows.items()}
    p50 = {k: [r["p50"] for r in v] for k, v in kind_rows.items()}
    med = {k: statistics.median(v) for k, v in p99.items()}
    med50 = {k: statistics.median(v) for k, v in p50.items()}
    return med, med50


def summary(work, agents, rate):
    rows = load(work)
    every = {k: [r for r in rows if r["tag"].startswith(k + "-")] for k in ("peer", "agents")}
    quiet = {k: [r for r in v if r["steal_share"] <= QUIET] for k, v in every.items()}
    med, med50 = ratios(every)
    all_ = {k: pooled(work, rows, k) for k in ("peer", "agents")}
    n = len(every["peer"])
    line = (f"\nOpen loop (latency, the figure the goal is judged on): at {rate} requests/s the median of the "
            f"{n} windows' p99 with the agents was {med['agents'] / med['peer']:.2f}× that without "
            f"({med['agents']:.2f} ms against {med['peer']:.2f} ms; p50 {med50['agents'] / med50['peer']:.2f}×). ")
    if quiet["peer"] and quiet["agents"]:
        qmed, qmed50 = ratios(quiet)
        line += (f"Over the quiet windows alone (the host's steal at most {100 * QUIET:.0f}% of the cores' time: "
                 f"{len(quiet['peer'])} without agents, {len(quiet['agents'])} with): "
                 f"{qmed['agents'] / qmed['peer']:.2f}× ({qmed['agents']:.2f} ms against {qmed['peer']:.2f} ms). ")
    else:
        line += (f"No quiet window on one side (the host's steal at most {100 * QUIET:.0f}% of the cores' time: "
                 f"{len(quiet['peer'])} without agents, {len(quiet['agents'])} with). ")
    line += (f"The p99 of all {n} windows' answers together: {all_['agents'][0.99] / all_['peer'][0.99]:.2f}× "
             f"({all_['agents'][0.99]:.2f} ms against {all_['peer'][0.99]:.2f} ms), p99.9 "
             f"{all_['agents'][0.999] / all_['peer'][0.999]:.2f}×.")
    print(line)


if __name__ == "__main__":
    args = sys.argv[1:]
    if args and args[0] == "--summary":
        summary(*args[1:4])
    else:
        table(*args[0:3])
