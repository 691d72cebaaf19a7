#!/usr/bin/env bash
# The agents list at scale: a master with N simulated agents heartbeating
# (bench/agents_load.cc), then `GET /api/v1/agents` timed alone (whole,
# gzip, one page of 100) and under 16 readers of it (wrk), while 50 readers
# of `GET /api/v1/health` on other connections show whether the list holds
# up the network threads; and `GET /api/v1/pools` and `/metrics`, which
# count the agents instead of listing them. Prints a Markdown table and a line.
#
#   bench/agents_list.sh [--agents N] [--slots N] [--seconds N]   (BUILD_DIR, default build/)
#
# MASTER_BIN overrides the ringmaster binary (to compare two builds).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${BUILD_DIR:-build}/bin
agents=10000 slots=8 seconds=5
while [ $# -gt 0 ]; do
  case $1 in
    --agents) agents=${2:?}; shift 2 ;;
    --slots) slots=${2:?}; shift 2 ;;
    --seconds) seconds=${2:?}; shift 2 ;;
    *) echo "usage: $0 [--agents N] [--slots N] [--seconds N]" >&2; exit 2 ;;
  esac
done
ulimit -n "$((agents + 4096))"

. bench/lib.sh
bench_build agents_load
bench_init agents-list
bench_extra_cleanup=show_master_log
show_master_log() { [ -n "${AGENTS_LIST_LOG:-}" ] && cp "$work/master.log" "$AGENTS_LIST_LOG"; return 0; }
if [ -n "${MASTER_BIN:-}" ]; then
  mkdir -p "$work/bin" && cp "$MASTER_BIN" "$work/bin/ringmaster"
  agents_load_bin="$bin/agents_load" bin="$work/bin"
else
  agents_load_bin="$bin/agents_load"
fi
agent_address=127.0.0.2
bench_master_yaml="connection_cap_exempt_addresses: [$agent_address]"
bench_start_master 1024
load_cpu=()
if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
  taskset -a -p -c 0 "$master" >/dev/null
  load_cpu=(taskset -c 1)
fi
"${load_cpu[@]}" "$agents_load_bin" 127.0.0.1 "$port" "$work/data/cluster-token" "$agents" \
  $((seconds * 6 + 120 + agents / 50)) "$slots" "$agent_address" >"$work/load.json" 2>"$work/load.err" &
bench_pids+=("$!")
for _ in $(seq 1 $((600 + agents / 10))); do
  grep -q "agents welcomed" "$work/load.err" && break
  sleep 0.2
done
get() {  # QUERY [curl options]: "bytes seconds"
  local q=$1
  shift
  curl -fsS -o /dev/null -w '%{size_download} %{time_total}\n' "$@" \
    -H "Authorization: Bearer $token" "$url/api/v1/agents$q"
}
read -r bytes whole_s < <(get "")
read -r gz_bytes gz_s < <(get "" -H "Accept-Encoding: gzip")
read -r page_bytes page_s < <(get "?limit=100&offset=5000")
# What counts the agents instead of listing them (the pools and the
# Prometheus gauges): the median of five answers, in ms.
median_ms() {  # PATH
  local _
  for _ in 1 2 3 4 5; do
    curl -fsS -o /dev/null -w '%{time_total}\n' -H "Authorization: Bearer $token" "$url$1"
  done | sort -n | awk 'NR == 3 {printf "%.1f", $1 * 1000}'
}
pools_ms=$(median_ms /api/v1/pools)
metrics_ms=$(median_ms /metrics)
# 16 readers of the list, and beside them 50 of /health on the same master.
"${load_cpu[@]}" wrk -t1 -c50 -d"${seconds}s" --timeout 30s --latency \
  -H "Authorization: Bearer $token" "$url/api/v1/health" >"$work/health.txt" &
health=$!
read -r arps ap50 ap99 _ < <("${load_cpu[@]}" wrk -t1 -c16 -d"${seconds}s" --timeout 30s --latency \
  -H "Authorization: Bearer $token" "$url/api/v1/agents" | bench_wrk_summary)
wait "$health"
read -r hrps hp50 hp99 _ < <(bench_wrk_summary <"$work/health.txt")
connected=$(curl -fsS -H "Authorization: Bearer $token" "$url/api/v1/agents" |
  python3 -c 'import json,sys; print(sum(1 for a in json.load(sys.stdin)["agents"] if a["state"] == "connected"))')

echo "| agents connected | whole list | gzip | one page of 100 | 16 list readers: req/s, p50, p99 ms | 50 /health readers beside them: req/s, p50, p99 ms |"
echo "| ---: | --- | --- | --- | --- | --- |"
echo "| $connected | $((bytes / 1024)) KiB in $whole_s s | $((gz_bytes / 1024)) KiB in $gz_s s | $((page_bytes / 1024)) KiB in $page_s s | $arps, $ap50, $ap99 | $hrps, $hp50, $hp99 |"
echo
echo "GET /api/v1/pools: $pools_ms ms, GET /metrics: $metrics_ms ms (medians of five), against the whole list's $whole_s s."
