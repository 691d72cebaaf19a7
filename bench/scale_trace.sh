#!/usr/bin/env bash
# What stalls the readers at 10,000 agents: bench/scale.sh's open loop, one
# window without agents and one with them, the whole run under a
# system-wide scheduler trace (perf record -a -e sched:sched_switch, on the
# monotonic clock), then bench/stall_report.py lines each answer up with the
# trace through the monotonic time rest_open_loop's window opened. For each
# window it prints the stalls (ten or more answers slower than 5 ms, close
# together), what ran on the master's core and on the other one during each,
# the host's steal time, and the p99 of the answers clear of the tasks that
# are not the benchmark's (each run of one on the master's core of 2 ms or
# more, and the 30 ms after it). Pinned as bench/scale.sh pins: the master
# on core 0, its agent thread (SCALE_AGENT_CPU, default 1) and the load on 1.
#   bench/scale_trace.sh [--agents N] [--rate R] [--seconds S]
#   (BUILD_DIR, default build/; needs perf and two cores)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
bin=${BUILD_DIR:-$root/build}/bin
agents=10000 rate=2400 seconds=5
while [ $# -gt 0 ]; do
  case $1 in
    --agents) agents=${2:?}; shift 2 ;;
    --rate) rate=${2:?}; shift 2 ;;
    --seconds) seconds=${2:?}; shift 2 ;;
    *) echo "scale_trace: unknown option $1" >&2; exit 2 ;;
  esac
done
command -v perf >/dev/null || { echo "scale_trace: needs perf" >&2; exit 2; }
[ "$(nproc)" -ge 2 ] || { echo "scale_trace: needs two cores" >&2; exit 2; }
ulimit -n $((agents + 4096))

. bench/lib.sh
bench_build agents_load rest_open_loop
bench_init scale-trace
agent_address=127.0.0.2
bench_master_yaml="connection_cap_exempt_addresses: [$agent_address]
threads: 1
agent_threads: 1"
bench_start_master 1024
taskset -a -p -c 0 "$master" >/dev/null
bench_pin_agent_thread "${SCALE_AGENT_CPU:-1}"  # as bench/scale.sh does
bench_store_experiments 100
(umask 077; printf '%s\n' "$token" >"$work/token")
open_prio=()
if command -v chrt >/dev/null && chrt -f 10 true 2>/dev/null; then open_prio=(chrt -f 10); fi
perf record -q -k CLOCK_MONOTONIC -a -e sched:sched_switch -o "$work/sched.data" 2>"$work/perf.err" &
perf_pid=$!
bench_pids+=("$perf_pid")
sleep 1
# One window, tagged $1: trace, stderr JSON and the host's steal ticks around it.
open_window() {
  local s0 s1
  s0=$(awk '/^cpu / {print $9}' /proc/stat)
  REST_OPEN_LOOP_TRACE="$work/open-$1.trace" taskset -c 1 "${open_prio[@]}" "$bin/rest_open_loop" \
    127.0.0.1 "$port" "$work/token" "$rate" "$seconds" 200 >"$work/open-$1.out" 2>"$work/open-$1.err"
  s1=$(awk '/^cpu / {print $9}' /proc/stat)
  echo $(((s1 - s0) * 1000 / $(getconf CLK_TCK))) >"$work/open-$1.steal"
}
echo "scale_trace: no agents, open loop at $rate requests/s" >&2
open_window peer
echo "scale_trace: starting $agents simulated agents" >&2
nice -n 10 taskset -c 1 "$bin/agents_load" 127.0.0.1 "$port" "$work/data/cluster-token" "$agents" \
  $((seconds * 4 + 120 + agents / 50)) 8 "$agent_address" >"$work/load.json" 2>"$work/load.err" &
load=$!
bench_pids+=("$load")
for _ in $(seq 1 $((600 + agents / 10))); do
  grep -q "agents welcomed" "$work/load.err" && break
  kill -0 "$load" 2>/dev/null || { echo "scale_trace: agents_load ended: $(cat "$work/load.err")" >&2; exit 1; }
  sleep 0.2
done
sleep 3
echo "scale_trace: $agents agents, open loop at $rate requests/s" >&2
open_window agents
kill -INT "$perf_pid"
wait "$perf_pid" || true
perf script -i "$work/sched.data" -F cpu,time,trace >"$work/sched.txt" 2>/dev/null
python3 bench/stall_report.py "$work" "$master" "$agents" "$rate"
