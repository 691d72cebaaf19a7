#!/usr/bin/env bash
# Scale: a master with 1,000 simulated agents heartbeating over the real agent
# protocol (bench/agents_load.cc) while 200 API clients read (wrk), next to the
# same master with no agents under the same readers, in the same run. Reports
# the readers' requests/s and latency and the master's CPU (utime + stime
# over the window, in % of one core) and memory (VmRSS, VmHWM).
#   bench/scale.sh [--seconds N] [--agents N]      (BUILD_DIR, default build/)
# Prints a Markdown table on stdout; progress on stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
bin=${BUILD_DIR:-$root/build}/bin
seconds=10 agents=1000 readers=200
while [ $# -gt 0 ]; do
  case $1 in
    --seconds) seconds=${2:?}; shift 2 ;;
    --agents) agents=${2:?}; shift 2 ;;
    *) echo "scale: unknown option $1" >&2; exit 2 ;;
  esac
done
ulimit -n 8192 2>/dev/null || ulimit -n "$(ulimit -Hn)"

. bench/lib.sh
bench_build agents_load
bench_init scale
bench_start_master 1024  # wrk: 200 API clients from 127.0.0.1, beside the simulated agents

bench_store_experiments 100  # paused: nothing runs on the simulated agents

# The readers: the experiments list, one experiment and the job queue, in turn.
cat >"$work/read.lua" <<'LUA'
local paths = {"/api/v1/experiments", "/api/v1/experiments/", "/api/v1/jobs"}
local n = 0
function request()
  n = n + 1
  local path = paths[n % 3 + 1]
  if path == "/api/v1/experiments/" then path = path .. (n % 100 + 1) end
  return wrk.format("GET", path)
end
LUA
ticks() { awk '{print $14 + $15}' "/proc/$master/stat"; }
hz=$(getconf CLK_TCK)
memory() {  # "rss_mib hwm_mib"
  awk '/^VmRSS/ {rss = $2} /^VmHWM/ {hwm = $2} END {printf "%.0f %.0f\n", rss / 1024, hwm / 1024}' "/proc/$master/status"
}
# One window: "cpu% rss hwm [rps p50 p99]" with or without readers.
window() {  # readers (0 or N)
  local t0 t1 out=""
  t0=$(ticks)
  if [ "$1" -gt 0 ]; then
    out=$(wrk -t2 -c"$1" -d"${seconds}s" --latency -s "$work/read.lua" -H "Authorization: Bearer $token" "$url" |
      bench_wrk_summary)
  else
    sleep "$seconds"
  fi
  t1=$(ticks)
  read -r rss hwm < <(memory)
  echo "$(python3 -c "print(f'{($t1 - $t0) / $hz / $seconds * 100:.0f}')") $rss $hwm ${out:-- - - 0}"
}

echo "scale: no agents, $readers readers" >&2
read -r cpu0 rss0 hwm0 rps0 p500 p990 bad0 < <(window "$readers")
echo "scale: starting $agents simulated agents" >&2
"$bin/agents_load" 127.0.0.1 "$port" "$work/data/cluster-token" "$agents" $((seconds * 3 + 60)) \
  >"$work/load.json" 2>"$work/load.err" &
bench_pids+=($!)
connected=0
for _ in $(seq 1 600); do
  connected=$(curl -fsS -H "Authorization: Bearer $token" "$url/api/v1/agents" |
    python3 -c 'import json,sys; d=json.load(sys.stdin); a=d["agents"] if isinstance(d,dict) else d; print(sum(1 for x in a if x.get("state")=="connected"))')
  [ "$connected" -ge "$agents" ] && break
  sleep 0.1
done
echo "scale: $connected agents connected; heartbeats alone" >&2
read -r cpu1 rss1 hwm1 _ < <(window 0)
echo "scale: $agents agents, $readers readers" >&2
read -r cpu2 rss2 hwm2 rps2 p502 p992 bad2 < <(window "$readers")
still=$(curl -fsS -H "Authorization: Bearer $token" "$url/api/v1/agents" |
  python3 -c 'import json,sys; d=json.load(sys.stdin); a=d["agents"] if isinstance(d,dict) else d; print(sum(1 for x in a if x.get("state")=="connected"))')
[ "$bad0" = 0 ] && [ "$bad2" = 0 ] || echo "scale: non-2xx answers: $bad0 without agents, $bad2 with" >&2
# The agents list itself, every agent with its slots, at 16 connections.
echo "scale: GET /api/v1/agents with $agents agents" >&2
bytes=$(curl -fsS -H "Authorization: Bearer $token" "$url/api/v1/agents" | wc -c)
t0=$(ticks)
read -r arps ap50 ap99 _ < <(wrk -t2 -c16 -d"${seconds}s" --latency -H "Authorization: Bearer $token" "$url/api/v1/agents" |
  bench_wrk_summary)
t1=$(ticks)
acpu=$(python3 -c "print(f'{($t1 - $t0) / $hz / $seconds * 100:.0f}')")
read -r arss ahwm < <(memory)

echo "| master with | readers | agents connected | requests/s | p50 ms | p99 ms | master CPU (% of a core) | RSS MiB | peak RSS MiB |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
echo "| no agents (the peer) | $readers | 0 | $rps0 | $p500 | $p990 | $cpu0 | $rss0 | $hwm0 |"
echo "| $agents agents heartbeating, no readers | 0 | $connected | - | - | - | $cpu1 | $rss1 | $hwm1 |"
echo "| $agents agents heartbeating | $readers | $still | $rps2 | $p502 | $p992 | $cpu2 | $rss2 | $hwm2 |"
echo "| $agents agents heartbeating; readers of \`GET /api/v1/agents\` only ($((bytes / 1024)) KiB each) | 16 | $still | $arps | $ap50 | $ap99 | $acpu | $arss | $ahwm |"
python3 -c "print(f'\nWith the agents the readers got {$rps2 / $rps0:.2f}× the requests/s of the master without them.')"
