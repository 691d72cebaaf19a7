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

work=$(mktemp -d "${TMPDIR:-/tmp}/ring-bench-rest.XXXXXX")
master=
cleanup() {
  [ -n "$master" ] && kill "$master" 2>/dev/null && wait "$master" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

(umask 077; head -c 18 /dev/urandom | base64 | tr -d '/+=\n' >"$work/admin-password")
"$bin/ringmaster" --listen 127.0.0.1:0 --port-file "$work/port" --data-dir "$work/data" \
  --admin-password-file "$work/admin-password" --log-level warn >"$work/master.log" 2>&1 &
master=$!
for _ in $(seq 1 100); do [ -s "$work/port" ] && break; sleep 0.1; done
url="http://127.0.0.1:$(cat "$work/port")"
token=$(curl -fsS -X POST "$url/api/v1/auth/login" \
  -d "{\"username\":\"admin\",\"password\":\"$(cat "$work/admin-password")\"}" |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')

# 1,000 experiments stored (paused: nothing runs).
mkdir -p "$work/model" && echo "exit 0" >"$work/model/run.sh"
model=$(tar -C "$work/model" -czf - . | base64 -w0)
config='name: bench\nentrypoint: sh run.sh\nsearcher:\n  name: single\n  metric: loss\n  max_length:\n    batches: 1\n'
printf '{"config":"%s","model_definition":"%s","activate":false}' "$config" "$model" >"$work/create.json"
echo "rest: storing 1,000 experiments" >&2
for _ in $(seq 1 1000); do
  curl -fsS -o /dev/null -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
    --data-binary @"$work/create.json" "$url/api/v1/experiments"
done

# wrk's summary → "requests/s p50_ms p99_ms".
measure() {
  local connections=$1 path=$2
  local threads=2
  [ "$connections" -lt 2 ] && threads=1
  wrk -t"$threads" -c"$connections" -d"${seconds}s" --latency -H "Authorization: Bearer $token" "$url$path" |
    python3 -c '
import re, sys
text = sys.stdin.read()
def ms(v, unit):
    return float(v) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
p = {q: ms(v, u) for q, v, u in re.findall(r"^\s+(50|99)%\s+([\d.]+)(us|ms|s)\s*$", text, re.M)}
errors = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
print("%.0f %.2f %.2f %s" % (rps, p["50"], p["99"], errors.group(1) if errors else 0))'
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
