#!/usr/bin/env bash
# Metric ingestion into a real master from 64 trials at once, next to the
# ceiling in the same run (the same rows written straight into a SqliteStore
# from one thread), then the metric routes under wrk at 16, 64 and 256
# connections next to GET /api/v1/health on the same master.
#   bench/ingest.sh [--seconds N]      (BUILD_DIR, default build/)
# Prints Markdown tables on stdout; progress on stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
bin=${BUILD_DIR:-$root/build}/bin
seconds=5
[ "${1:-}" = "--seconds" ] && seconds=${2:?--seconds needs a number}
trials=64 batch=500 metrics=4
for tool in wrk sqlite3; do
  command -v $tool >/dev/null || { echo "ingest: $tool is not installed (deploy/install-deps.sh)" >&2; exit 2; }
done

. bench/lib.sh
bench_build ingest_bench
bench_init ingest
bench_start_master 1024  # wrk opens up to 256 connections from 127.0.0.1, beside the trial and curl
bench_start_agent bench-agent "$trials"

# 64 trials that write down their allocation and wait.
mkdir -p "$work/model" "$work/allocations"
cat >"$work/model/run.sh" <<SH
echo "\$RING_TRIAL_ID \$RING_ALLOCATION_ID \$RING_ALLOCATION_TOKEN" >"$work/allocations/\$RING_TRIAL_ID.tmp"
mv "$work/allocations/\$RING_TRIAL_ID.tmp" "$work/allocations/\$RING_TRIAL_ID"
exec sleep 600
SH
model=$(tar -C "$work/model" -czf - . | base64 -w0)
config="name: ingest\nentrypoint: sh run.sh\nhyperparameters:\n  i:\n    type: int\n    minval: 1\n    maxval: $trials\n    count: $trials\nsearcher:\n  name: grid\n  metric: loss\n  max_length:\n    batches: 100000000\nmax_restarts: 0\n"
printf '{"config":"%s","model_definition":"%s"}' "$config" "$model" >"$work/create.json"
bench_submit "$work/create.json" >/dev/null
echo "ingest: waiting for $trials trials to run" >&2
for _ in $(seq 1 600); do
  [ "$(find "$work/allocations" -type f ! -name '*.tmp' | wc -l)" -ge "$trials" ] && break
  sleep 0.1
done
cat "$work/allocations"/* | grep -v '\.tmp' >"$work/allocations.txt"
[ "$(wc -l <"$work/allocations.txt")" -ge "$trials" ] || { echo "ingest: trials did not start" >&2; cat "$work"/agent-*.log >&2; exit 1; }

echo "ingest: $trials senders for ${seconds}s" >&2
sent=$("$bin/ingest_bench" send "$url" "$work/allocations.txt" "$seconds" "$batch" "$metrics")

# The metric routes under wrk, on a trial with the reports just sent.
read -r trial allocation alloc_token < <(head -1 "$work/allocations.txt")
cat >"$work/post.lua" <<'LUA'
local threads = 0
function setup(thread) threads = threads + 1; thread:set("id", threads) end
function init(args) n = id * 1000000000 end
function request()
  n = n + 1
  local body = string.format('{"reports":[{"kind":"training","batches":%d,"metrics":{"loss":%f}}]}', n, 1 / n)
  local headers = {["Content-Type"] = "application/json"}
  for k, v in pairs(wrk.headers) do headers[k] = v end
  return wrk.format("POST", nil, headers, body)
end
LUA
measure() {  # connections, path, bearer, [lua], [header] → "requests/s p50_ms p99_ms non2xx"
  local more=()
  [ -n "${4:-}" ] && more+=(-s "$4")
  [ -n "${5:-}" ] && more+=(-H "$5")
  wrk -t2 -c"$1" -d"${seconds}s" --latency "${more[@]}" -H "Authorization: Bearer $3" "$url$2" | bench_wrk_summary
}
# The chart GET twice: as a plain HTTP client asks, and with the
# Accept-Encoding every browser sends (the web UI's own requests).
chart="/api/v1/trials/$trial/metrics?kind=training&max_points=1000"
size() { curl -fsS -o /dev/null -w '%{size_download}' -H "Authorization: Bearer $token" "$@" "$url$chart"; }
chart_bytes="$(size) $(size --compressed)"
routes=$(mktemp -p "$work")
for route in "GET $chart" "GET+gzip $chart" "POST /api/v1/allocations/$allocation/metrics"; do
  for c in 16 64 256; do
    echo "ingest: $route at $c connections" >&2
    if [ "${route%% *}" = GET ]; then
      read -r rps p50 p99 bad < <(measure "$c" "${route#* }" "$token")
    elif [ "${route%% *}" = GET+gzip ]; then
      read -r rps p50 p99 bad < <(measure "$c" "${route#* }" "$token" "" "Accept-Encoding: gzip, deflate, br")
    else
      read -r rps p50 p99 bad < <(measure "$c" "${route#* }" "$alloc_token" "$work/post.lua")
    fi
    read -r crps _ cp99 _ < <(measure "$c" "/api/v1/health" "$token")
    [ "$bad" = 0 ] || echo "ingest: $bad non-2xx answers on $route" >&2
    echo "$route|$c|$rps|$p50|$p99|$crps|$cp99" >>"$routes"
  done
done

# Everything acknowledged is in the database once the master has stopped.
kill "$agent" "$master"
wait "$agent" "$master" 2>/dev/null || true
bench_pids=()
rows=$(sqlite3 "$work/data/ringmaster.db" \
  "SELECT count(*) FROM metrics WHERE kind = 'training' AND batches < 1000000000;")

echo "ingest: the ceiling, one thread into a SqliteStore" >&2
ceiling=$("$bin/ingest_bench" ceiling "$work/ceiling.db" "$trials" "$seconds" "$batch" "$metrics")

python3 - "$sent" "$ceiling" "$rows" "$routes" "$trials" "$batch" "$metrics" "$chart_bytes" <<'PY'
import json, sys
sent, ceiling = json.loads(sys.argv[1]), json.loads(sys.argv[2])
rows, trials, batch, metrics = int(sys.argv[3]), int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])
dropped = sent["reports_stored"] - rows
print(f"{trials} trials, each over its own keep-alive connection, {batch} reports of {metrics} metrics per request.\n")
print("| writer | points/s | reports/s | requests/s | p50 ms | p99 ms | acknowledged | in the database | dropped | errors | ratio |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
def row(name, r, stored_rows, drop):
    print(f"| {name} | {r['points_per_s']:.0f} | {r['reports_per_s']:.0f} | {r['requests_per_s']:.0f} | "
          f"{r['p50_ms']:.2f} | {r['p99_ms']:.2f} | {r['reports_stored']} | {stored_rows} | {drop} | {r['errors']} | "
          f"{r['points_per_s'] / ceiling['points_per_s']:.2f} |")
row("master, POST /api/v1/allocations/{id}/metrics", sent, rows, dropped)
row("ceiling: SqliteStore::AddMetrics, one thread", ceiling, ceiling["reports_stored"], 0)
print()
print("| route | connections | requests/s | p50 ms | p99 ms | ceiling requests/s (health) | ratio | ceiling p99 ms |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
for line in open(sys.argv[4]):
    route, c, rps, p50, p99, crps, cp99 = line.strip().split("|")
    route = route.replace("/trials/" + route.split("/trials/")[-1].split("/")[0], "/trials/{id}", 1) if "/trials/" in route else route
    route = route.split("/allocations/")[0] + "/allocations/{id}/metrics" if "/allocations/" in route else route
    ratio = f"{float(rps) / float(crps):.2f}" if float(crps) > 0 else "n/a"
    gzip = route.startswith("GET+gzip ")
    route = "GET " + route[len("GET+gzip "):] if gzip else route
    route = f"`{route}`" + (", Accept-Encoding: gzip" if gzip else "")
    print(f"| {route} | {c} | {rps} | {p50} | {p99} | {crps} | {ratio} | {cp99} |")
plain, gz = map(int, sys.argv[8].split())
print(f"\nThe chart GET's answer is {plain} bytes, {gz} bytes gzip-compressed ({gz / plain:.2f}×).")
PY
