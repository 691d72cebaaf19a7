#!/usr/bin/env bash
# REST throughput and latency of a real master on loopback, measured with wrk
# at 16, 64 and 256 connections, each route next to its ceiling in the same
# run: the same Beast server answering GET /api/v1/health, a fixed response
# that touches neither the router's authentication nor SQLite.
#   bench/rest.sh [--seconds N]      (BUILD_DIR, default build/)
# Prints a Markdown table on stdout; progress on stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
bin=${BUILD_DIR:-$root/build}/bin
seconds=5
[ "${1:-}" = "--seconds" ] && seconds=${2:?--seconds needs a number}
command -v wrk >/dev/null || { echo "rest: wrk is not installed (deploy/install-deps.sh)" >&2; exit 2; }

. bench/lib.sh
bench_init rest
bench_start_master 1024  # wrk: up to 256 connections from 127.0.0.1, beside curl

echo "rest: storing 1,000 experiments" >&2
bench_store_experiments 1000

# wrk's summary → "requests/s p50_ms p99_ms".
measure() {
  local connections=$1 path=$2
  local threads=2
  [ "$connections" -lt 2 ] && threads=1
  wrk -t"$threads" -c"$connections" -d"${seconds}s" --latency -H "Authorization: Bearer $token" "$url$path" |
    bench_wrk_summary
}

echo "| route | connections | requests/s | p50 ms | p99 ms | ceiling requests/s (health) | ratio | ceiling p99 ms |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
for route in "/api/v1/experiments" "/api/v1/experiments/500" "/api/v1/experiments/500/trials"; do
  for c in 16 64 256; do
    echo "rest: $route at $c connections" >&2
    read -r rps p50 p99 bad < <(measure "$c" "$route")
    read -r crps _ cp99 _ < <(measure "$c" "/api/v1/health")
    [ "$bad" = 0 ] || echo "rest: $bad non-2xx answers on $route" >&2
    ratio=$(python3 -c "print(f'{$rps / $crps:.2f}')")
    echo "| \`GET $route\` | $c | $rps | $p50 | $p99 | $crps | $ratio | $cp99 |"
  done
done
