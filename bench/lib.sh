# Shared by the benchmark scripts (sourced): a scratch folder removed on
# exit with every process started in it, a master and agents on 127.0.0.1,
# signing in as admin, and wrk's summary as "requests/s p50_ms p99_ms non2xx".
# Needs `bin` (the build's bin folder) set by the caller.

bench_pids=()
# bench_build TARGET...: builds benchmark executables into the build of $bin
# (they are not part of the default build).
bench_build() {
  cmake --build "$bin/.." --target "$@" >&2
}

# bench_init NAME: makes $work and stops everything at exit.
bench_init() {
  work=$(mktemp -d "${TMPDIR:-/tmp}/ring-bench-$1.XXXXXX")
  chmod 0755 "$work"
  trap bench_cleanup EXIT
}
bench_cleanup() {
  local p
  for p in "${bench_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${bench_pids[@]}"; do wait "$p" 2>/dev/null || true; done
  [ -n "${bench_extra_cleanup:-}" ] && "$bench_extra_cleanup"
  rm -rf "$work"
}

# bench_start_master [PER_ADDRESS]: a master on a free port with its data in
# $work/data; sets master (its pid), port, url and token (the admin's, signed
# in). Every client of a bench connects from 127.0.0.1: a bench that opens
# more connections than the master's default max_connections_per_address
# (256) names the cap it needs. bench_master_yaml (lines added to its
# master.yaml) and bench_master_log_level (default warn) are read if set.
bench_start_master() {
  (umask 077; head -c 18 /dev/urandom | base64 | tr -d '/+=\n' >"$work/admin-password")
  printf 'max_connections_per_address: %s\n%s\n' "${1:-256}" "${bench_master_yaml:-}" >"$work/master.yaml"
  "$bin/ringmaster" --config "$work/master.yaml" --listen 127.0.0.1:0 --port-file "$work/port" \
    --data-dir "$work/data" --admin-password-file "$work/admin-password" \
    --log-level "${bench_master_log_level:-warn}" \
    >"$work/master.log" 2>&1 &
  master=$!
  bench_pids+=("$master")
  local _
  for _ in $(seq 1 100); do [ -s "$work/port" ] && break; sleep 0.1; done
  port=$(cat "$work/port")
  url="http://127.0.0.1:$port"
  token=$(curl -fsS -X POST "$url/api/v1/auth/login" -H "Content-Type: application/json" \
    -d "{\"username\":\"admin\",\"password\":\"$(cat "$work/admin-password")\"}" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')
}

# bench_start_agent ID SLOTS: an agent of the master with SLOTS CPU slots,
# returned once the master lists it as connected; sets agent (its pid).
# bench_agent_log_level (default warn) is read if set.
bench_start_agent() {
  "$bin/ringagent" --master "$url" --id "$1" --cpu-slots "$2" --work-dir "$work/agent-$1" \
    --state-dir "$work/agent-$1-state" --token-file "$work/data/cluster-token" --single-user \
    --log-level "${bench_agent_log_level:-warn}" >"$work/agent-$1.log" 2>&1 &
  agent=$!
  bench_pids+=("$agent")
  local _
  for _ in $(seq 1 100); do
    curl -fsS -H "Authorization: Bearer $token" "$url/api/v1/agents" | grep -q "\"$1\"" && return 0
    sleep 0.1
  done
  echo "bench: agent $1 did not connect" >&2
  return 1
}

# bench_submit JSON_FILE: POSTs an experiment as the admin; prints its id.
bench_submit() {
  curl -fsS -H "Authorization: Bearer $token" --data-binary @"$1" "$url/api/v1/experiments" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])'
}

# bench_store_experiments N: N paused experiments (nothing runs), ids 1..N.
bench_store_experiments() {
  mkdir -p "$work/stored-model" && echo "exit 0" >"$work/stored-model/run.sh"
  local model config _
  model=$(tar -C "$work/stored-model" -czf - . | base64 -w0)
  config='name: bench\nentrypoint: sh run.sh\nsearcher:\n  name: single\n  metric: loss\n  max_length:\n    batches: 1\n'
  printf '{"config":"%s","model_definition":"%s","activate":false}' "$config" "$model" >"$work/stored.json"
  for _ in $(seq 1 "$1"); do
    curl -fsS -o /dev/null -H "Authorization: Bearer $token" --data-binary @"$work/stored.json" "$url/api/v1/experiments"
  done
}

# wrk's output on stdin → "requests/s p50_ms p99_ms non2xx".
bench_wrk_summary() {
  python3 -c '
import re, sys
text = sys.stdin.read()
def ms(v, unit):
    return float(v) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
p = {q: ms(v, u) for q, v, u in re.findall(r"^\s+(50|99)%\s+([\d.]+)(us|ms|s)\s*$", text, re.M)}
bad = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
print("%.0f %.2f %.2f %s" % (rps, p["50"], p["99"], bad.group(1) if bad else 0))'
}

# bench_pin_agent_thread CORE: the master's agent thread (ring-agents) on
# CORE, after the master was pinned whole to another: on a master machine of
# two cores or more the agents' connections do not share the requests' core.
bench_pin_agent_thread() {
  local t
  for t in /proc/"$master"/task/*; do
    [ "$(cat "$t/comm" 2>/dev/null)" = ring-agents ] && taskset -p -c "$1" "${t##*/}" >/dev/null
  done
  return 0
}
