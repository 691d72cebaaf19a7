#!/usr/bin/env bash
# Runs the platform benchmarks (REST, metric ingestion, launch latency against
# Slurm, overhead against a bare run, 1,000 agents) against a build and writes their section of
# docs/benchmarks.md (between the "platform benchmarks" markers) with the
# command, the machine and every figure next to its peer from the same run.
#   bench/run.sh [--seconds N] [--all]
# --all also runs the collectives, training-step, checkpoint and recovery
# benchmarks, which take several minutes and keep their own sections
# (bench/collectives.sh, bench/training_step.sh, bench/checkpoint.sh,
# bench/recovery.sh), the scheduler pass (scheduler_bench, 1,000 and
# 10,000 agents; and scheduler_bench --incremental, the kept scheduler
# after one event) and 10,000 simulated agents (bench/scale.sh --agents
# 10000), whose tables it writes between their markers in
# docs/benchmarks.md. BUILD_DIR picks the build (default build/).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=5 all=0
while [ $# -gt 0 ]; do
  case $1 in
    --seconds) seconds=${2:?}; shift 2 ;;
    --all) all=1; shift ;;
    *) echo "run: unknown option $1" >&2; exit 2 ;;
  esac
done
build=${BUILD_DIR:-build}
[ -x "$build/bin/ringmaster" ] || { echo "run: no $build/bin/ringmaster; build first (deploy/build.sh)" >&2; exit 2; }

machine="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, \
$(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), Linux $(uname -r)"
rest=$(BUILD_DIR=$build bench/rest.sh --seconds "$seconds")
ingest=$(BUILD_DIR=$build bench/ingest.sh --seconds "$seconds")
launch=$(BUILD_DIR=$build bench/launch.sh)
overhead=$(BUILD_DIR=$build bench/overhead.sh)
scale=$(BUILD_DIR=$build bench/scale.sh --seconds "$seconds")

section=$(mktemp)
trap 'rm -f "$section"' EXIT
cat >"$section" <<MD
<!-- platform benchmarks: begin (written by bench/run.sh) -->
## REST API under load

Command: \`bench/run.sh --seconds $seconds\` ($(date -u +%Y-%m-%d)), machine: $machine.

A master on loopback with 1,000 experiments stored, signed in as admin, driven
by wrk (2 threads, keep-alive) for $seconds s per figure at 16, 64 and 256
connections. Each route is measured right after the same master answering
\`GET /api/v1/health\` at the same concurrency: the same Beast server, router
and connection handling with a fixed answer (no token check, no SQLite), the
ceiling of this server on this machine. The ratio is requests/s over that
ceiling's. wrk and the master share the 2 cores, so absolute figures are
lower than on a machine where the clients run elsewhere.

$rest

The goal is p99 ≤ 20 ms at 256 connections.

## Metric ingestion

Command: \`bench/ingest.sh --seconds $seconds\` (part of the above). A real
master and agent run 64 trials that wait; \`bench/ingest_bench.cc\` reports
training metrics for each of them, with its allocation's token, as fast as the
master acknowledges, for $seconds s. Afterwards the master is stopped and the
rows are counted in its database. The ceiling is the same rows written by one
thread straight into a SqliteStore on the same disk, in the same batches, with
no HTTP, JSON or token checks. The ratio is points/s over the ceiling's.
Then wrk drives the metric routes of the same master at 16, 64 and 256
connections, next to \`GET /api/v1/health\` as above. The GET asks what the web
UI's chart asks, at most 1,000 points of a trial that has tens of thousands of
reports. Each POST carries one new report, which is the worst case: the trial
runtime sends up to 500 per request.

$ingest

The goals are at least 100,000 points/s with nothing dropped, and p99 ≤ 20
ms at 256 connections.

## Launch latency

Command: \`bench/launch.sh\` (part of the above). A master and one agent with
one CPU slot, warmed by a first trial. First, 20 experiments are submitted one
at a time, each once the slot is free again: the time from just before the
POST to the moment the trial's process wrote its first line. Then one
experiment of 20 trials goes through the single slot: the time from a trial's
last line to the next trial's first.
Slurm 22.05 from Debian runs on the same host in the same run (slurmctld and
slurmd on loopback, \`SchedulerParameters=batch_sched_delay=0,sched_min_interval=0\`,
an \`Epilog\`, exclusive jobs through one node), timed the same way from
\`sbatch\`. The goal is at most 200 ms for both. The last row is a second
master whose pool is that Slurm partition (the Slurm resource manager,
\`slots_per_node: 1\`, single identity): each trial is one Slurm job whose
\`srun\` starts a one-allocation \`ringagent\`, which connects back, fetches
the model and starts the trial, against plain \`sbatch\` of the same run.

$launch

## Platform overhead

Command: \`bench/overhead.sh\` (part of the above). The digits-libtorch trial
(one rank, one torch thread, 3,000 steps of 32 images) under a master and an
agent, next to the same launcher (the model folder's \`run.sh\`) and binary
run bare in local mode, with the same seed, alternating, three times each.
Both are timed the same way around the process: from just before the
launcher starts to just after it exits. Under the master the process also
reports its metrics, checkpoints at the end and completes its searcher
operation; the launch itself is in the table above. Beside the wall time, the
CPU time of the process and its children (user + system, from the shell's
\`times\`): other load on the machine moves the wall time of both runs, while
the CPU time shows the work the platform adds to the process. The goal is at
most 1.02×.

$overhead

## 1,000 agents

Command: \`bench/scale.sh --seconds $seconds\` (part of the above). A master with
100 experiments stored. \`bench/agents_load.cc\` is 1,000 simulated agents in
one process, each on its own WebSocket with the cluster token. Each says hello
with one CPU slot and sends a heartbeat at the interval the master's welcome
gives (1 s), as ringagent does. 200 wrk connections read the experiments list,
one experiment and the job queue in turn. The peer is the same master with no
agents under the same readers, measured first. Those readers are a closed
loop (each connection sends when its last answer is back), which saturates
the master and measures throughput. The same mix is then sent in an open
loop by \`bench/rest_open_loop.cc\`: 200 connections, requests due at a fixed
rate of 30% of the closed loop's requests/s without agents, each request's
latency counted from when it was due, so time queued is not hidden. The
latency figures to compare are those of the open loop. The master runs on core 0
and the load generators (wrk, rest_open_loop, the simulated agents) on core 1 (taskset); the
agents connect from 127.0.0.2, which the bench's master.yaml lists in
\`connection_cap_exempt_addresses\`. The master's CPU is the utime + stime of
its own process over the window, in % of one core; the simulator's is
beside it. The last row reads the agents list itself: every agent with its
slots, one answer of a few hundred KiB.

$scale
MD
if grep -q 'platform benchmarks: begin' docs/benchmarks.md; then
  python3 - "$section" <<'PY'
import re, sys
new = open(sys.argv[1]).read().strip() + "\n"
path = "docs/benchmarks.md"
text = open(path).read()
text = re.sub(r"<!-- platform benchmarks: begin.*?<!-- platform benchmarks: end -->\n", new + "<!-- platform benchmarks: end -->\n", text, flags=re.S)
open(path, "w").write(text)
PY
else
  { echo; cat "$section"; echo "<!-- platform benchmarks: end -->"; } >>docs/benchmarks.md
fi
# replace_block NAME FILE: the text of FILE between the "NAME: begin" and
# "NAME: end" markers of docs/benchmarks.md.
replace_block() {
  python3 - "$1" "$2" <<'PY'
import re, sys
name, body = sys.argv[1], open(sys.argv[2]).read().strip() + "\n"
path = "docs/benchmarks.md"
text = open(path).read()
pattern = r"(<!-- %s: begin[^>]*-->\n).*?(<!-- %s: end -->\n)" % (re.escape(name), re.escape(name))
if not re.search(pattern, text, flags=re.S):
    sys.exit("run: no %s markers in %s" % (name, path))
text = re.sub(pattern, lambda m: m.group(1) + body + m.group(2), text, flags=re.S)
open(path, "w").write(text)
PY
}
if [ "$all" = 1 ]; then
  cmake --build "$build" --target scheduler_bench >&2
  block=$(mktemp)
  { echo "Command: \`./build/bin/scheduler_bench\` ($(date -u +%Y-%m-%d)), machine: $machine."; echo
    "$build/bin/scheduler_bench" | grep -v '^Command:'; } >"$block"
  replace_block "scheduler pass" "$block"
  { echo "Command: \`./build/bin/scheduler_bench --incremental\` ($(date -u +%Y-%m-%d)), machine: $machine."; echo
    "$build/bin/scheduler_bench" --incremental | grep -v '^Command:'; } >"$block"
  replace_block "scheduler incremental" "$block"
  { echo "Command: \`bench/scale.sh --seconds $seconds --agents 10000 --slots 8\` ($(date -u +%Y-%m-%d)), machine: $machine."
    echo; BUILD_DIR=$build bench/scale.sh --seconds "$seconds" --agents 10000 --slots 8; } >"$block"
  replace_block "10,000 agents" "$block"
  rm -f "$block"
  bench/collectives.sh "$build"
  bench/training_step.sh
  bench/checkpoint.sh
  BUILD_DIR=$build bench/recovery.sh
fi
echo "run: docs/benchmarks.md updated" >&2
