#!/usr/bin/env bash
# Recovery time: a real master and three agents of one CPU slot each on
# 127.0.0.1; the digits-libtorch trial trains on two of them (two ranks, gloo,
# a checkpoint every --checkpoint batches); in the middle of training the
# machine of rank 0 is lost, as one of two faults:
#   kill  the agent and its rank's processes get SIGKILL at once: the kernel
#         closes the agent's connection, so the master sees it go at once;
#   stop  they get SIGSTOP: the connection stays open and silent, as when a
#         machine loses power or its cable, so only the heartbeat deadline
#         tells (the processes are killed at the end).
# Measured from the fault to the first metric report of the trial's next
# allocation, which runs on the two agents left, and split at the master's
# log lines (JSON, millisecond timestamps) and the ranks' lines (stamped by
# their agents as they read them):
#   detection     fault → the old allocation ends (agent lost)
#   rescheduling  → the next allocation is placed and its ranks are sent to the agents
#   ranks started → every rank reports RUNNING (model fetched, process started)
#   process start-up and rendezvous → every rank printed that it joined the group
#   restore       → every rank printed that it resumed from the checkpoint
#   first batches and report → the master has the first metric report
# and the work lost: the batches reported before the fault past the checkpoint
# the trial resumed from. Each run is a fresh cluster; each setting of the
# master's heartbeat_timeout_ms/reconnect_window_ms and each fault runs --runs times.
#   bench/recovery.sh [--runs N] [--settings HB/WINDOW,...] [--faults kill,stop]
#                     [--checkpoint BATCHES] [--kill-at BATCHES] [--rank R]
# Default settings: 2000/1000 (a fast-failing cluster) and 10000/25000 (the
# master's defaults). BUILD_DIR picks the build (default build/);
# RECOVERY_KEEP_LOGS=DIR keeps the logs of the runs there. Prints a Markdown
# table on stdout; progress on stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
build=$(cd "${BUILD_DIR:-$root/build}" && pwd)
bin=$build/bin
runs=3 settings=2000/1000,10000/25000 faults=kill,stop checkpoint=200 kill_at=500 rank=0 one= fault=kill
while [ $# -gt 0 ]; do
  case $1 in
    --runs) runs=${2:?}; shift 2 ;;
    --settings) settings=${2:?}; shift 2 ;;
    --faults) faults=${2:?}; shift 2 ;;
    --fault) fault=${2:?}; shift 2 ;;  # of one run
    --checkpoint) checkpoint=${2:?}; shift 2 ;;
    --kill-at) kill_at=${2:?}; shift 2 ;;
    --rank) rank=${2:?}; shift 2 ;;
    --one) one=${2:?}; shift 2 ;;  # one run with this HB/WINDOW: a JSON line on stdout
    *) echo "recovery: unknown option $1" >&2; exit 2 ;;
  esac
done
staged=$build/examples/digits-libtorch/model
[ -x "$staged/digits_trial" ] || { echo "recovery: digits-libtorch is not built (needs libtorch-dev)" >&2; exit 2; }

if [ -z "$one" ]; then
  results=$(mktemp)
  trap 'rm -f "$results"' EXIT
  for f in ${faults//,/ }; do
    for setting in ${settings//,/ }; do
      for r in $(seq 1 "$runs"); do
        echo "recovery: $f, heartbeat_timeout_ms/reconnect_window_ms $setting, run $r of $runs" >&2
        RECOVERY_KEEP_LOGS=${RECOVERY_KEEP_LOGS:+$RECOVERY_KEEP_LOGS/$f-${setting/\//-}-$r} \
          "$0" --one "$setting" --fault "$f" --checkpoint "$checkpoint" --kill-at "$kill_at" --rank "$rank" >>"$results"
      done
    done
  done
  python3 - "$results" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
phases = [("detection", "detection"), ("rescheduling", "rescheduling"), ("ranks started", "start"),
          ("process start-up and rendezvous", "process_start"), ("restore", "restore"),
          ("first batches and report", "first_batches")]
def fmt(v):
    v = [x for x in v if x is not None]
    if not v:
        return "-"
    d = 3 if statistics.median(v) < 0.1 else 2
    return f"{statistics.median(v):.{d}f} ({min(v):.{d}f}–{max(v):.{d}f})"
print("| fault | heartbeat_timeout_ms / reconnect_window_ms | runs | fault → training again, s | " +
      " | ".join(f"{name}, s" for name, _ in phases) +
      " | not detection, s | not detection / total | batches lost |")
print("| --- | --- | --- | --- | " + " | ".join("---" for _ in phases) + " | --- | --- | --- |")
keys = []
for r in rows:
    if (r["fault"], r["setting"]) not in keys:
        keys.append((r["fault"], r["setting"]))
for fault, setting in keys:
    rs = [r for r in rows if (r["fault"], r["setting"]) == (fault, setting)]
    rest = [r["total"] - r["detection"] for r in rs]
    share = [(r["total"] - r["detection"]) / r["total"] for r in rs]
    lost = [r["lost_batches"] for r in rs]
    print(f"| {fault} | {setting} | {len(rs)} | {fmt([r['total'] for r in rs])} | " +
          " | ".join(fmt([r.get(k) for r in rs]) for _, k in phases) +
          f" | {fmt(rest)} | {statistics.median(share):.3f}× | "
          f"{statistics.median(lost):.0f} ({min(lost)}–{max(lost)}) |")
print()
print("Median (min–max) of the runs, in seconds. Each run (fault, setting: total, batch resumed "
      "at, batches lost, 1-minute load average at the fault): " +
      "; ".join(f"{r['fault']} {r['setting']}: {r['total']:.2f} s, {r['resumed_at']}, {r['lost_batches']}, "
                f"{r['load1']:.1f}" for r in rows) + ".")
PY
  exit 0
fi

. bench/lib.sh
bench_init recovery
bench_master_yaml="heartbeat_timeout_ms: ${one%/*}
reconnect_window_ms: ${one#*/}
log_format: json"
bench_master_log_level=info
# Rank processes left behind (their agents stopped first) are killed at exit.
doomed=
recovery_cleanup() {
  local p
  # shellcheck disable=SC2086
  [ -z "$doomed" ] || kill -9 $doomed 2>/dev/null || true
  for p in $(recovery_descendants "${bench_pids[@]}"); do kill -9 "$p" 2>/dev/null || true; done
  if [ -n "${RECOVERY_KEEP_LOGS:-}" ]; then
    mkdir -p "$RECOVERY_KEEP_LOGS" && cp "$work"/*.log "$work"/*.json "$RECOVERY_KEEP_LOGS/" || true
  fi
  bench_cleanup
}
# recovery_descendants PID...: every process below them.
recovery_descendants() {
  ps -e -o pid=,ppid= | python3 -c '
import sys
roots = set(sys.argv[1:])
children = {}
for line in sys.stdin:
    pid, ppid = line.split()
    children.setdefault(ppid, []).append(pid)
out, unvisited = [], list(roots)
while unvisited:
    for c in children.get(unvisited.pop(), []):
        out.append(c); unvisited.append(c)
print(" ".join(out))' "$@"
}
trap recovery_cleanup EXIT
bench_start_master
declare -A agent_pid
for a in agent-1 agent-2 agent-3; do
  bench_start_agent "$a" 1
  agent_pid[$a]=$agent
done

model=$(tar -C "$staged" -czf - . | base64 -w0)
config="name: recovery\nentrypoint: ${RECOVERY_ENTRYPOINT:-stdbuf -oL sh run.sh}\nhyperparameters:\n  learning_rate: 0.05\n  batch_size: 32\n  momentum: 0.9\n  report_every: 10\n  batch_sleep_ms: 5\nsearcher:\n  name: single\n  metric: validation_accuracy\n  smaller_is_better: false\n  max_length:\n    batches: 100000\nresources:\n  slots_per_trial: 2\nmin_checkpoint_period:\n  batches: $checkpoint\nmax_restarts: 5\nenvironment:\n  variables:\n    OMP_NUM_THREADS: '1'\n    OPENBLAS_NUM_THREADS: '1'\n"
printf '{"config":"%s","model_definition":"%s"}' "$config" "$model" >"$work/create.json"
exp=$(bench_submit "$work/create.json")
get() { curl -fsS -H "Authorization: Bearer $token" "$url/api/v1/$1"; }
trial=
for _ in $(seq 1 100); do
  trial=$(get "experiments/$exp/trials" | python3 -c 'import json,sys; t=json.load(sys.stdin)["trials"]; print(t[0]["id"] if t else "")')
  [ -n "$trial" ] && break
  sleep 0.1
done
[ -n "$trial" ] || { echo "recovery: experiment $exp has no trial" >&2; exit 1; }
last_batch() {
  get "trials/$trial/metrics?kind=training" |
    python3 -c 'import json,sys; m=json.load(sys.stdin)["metrics"]; print(max((r["batches"] for r in m), default=0))'
}
reached=0
for _ in $(seq 1 1200); do
  reached=$(last_batch)
  [ "$reached" -ge "$kill_at" ] && break
  sleep 0.1
done
[ "$reached" -ge "$kill_at" ] || { echo "recovery: the trial did not reach batch $kill_at" >&2; tail "$work/master.log" >&2; exit 1; }

# The agent of that rank and every process below it, at once.
read -r old victim < <(get "trials/$trial/allocations" |
  python3 -c 'import json,sys; a=json.load(sys.stdin)["allocations"][-1]; print(a["id"], a["placements"][int(sys.argv[1])]["agent_id"])' "$rank")
doomed="${agent_pid[$victim]} $(recovery_descendants "${agent_pid[$victim]}")"
load=$(cut -d' ' -f1 /proc/loadavg)
killed_at=$(date +%s.%N)
# shellcheck disable=SC2086
if [ "$fault" = kill ]; then kill -9 $doomed; else kill -STOP $doomed; fi
echo "recovery: $fault $victim (pids $doomed) at batch >= $reached" >&2

# Training again: the first metric report of the next allocation.
for _ in $(seq 1 1800); do
  grep -q 'first metrics' "$work/master.log" && grep 'first metrics' "$work/master.log" | grep -vq "allocation $old:" && break
  sleep 0.1
done
get "trials/$trial/checkpoints" >"$work/checkpoints.json" 2>/dev/null || echo '{}' >"$work/checkpoints.json"
get "trials/$trial/metrics?kind=training" >"$work/metrics.json"
get "trials/$trial/allocations" >"$work/allocations.json"
# The ranks' lines (stamped by their agents as they read them) split the
# process's own start: joined the process group, restored the checkpoint.
for _ in $(seq 1 50); do
  get "trials/$trial/logs?limit=10000" >"$work/trial-logs.json"
  grep -q 'resumed from checkpoint' "$work/trial-logs.json" && break
  sleep 0.1
done
curl -fsS -o /dev/null -X POST -H "Authorization: Bearer $token" "$url/api/v1/experiments/$exp/kill" || true

python3 - "$work" "$one" "$old" "$victim" "$killed_at" "$load" "$fault" <<'PY'
import datetime, json, re, sys
work, setting, old, victim, killed_at = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5])
load, fault = float(sys.argv[6]), sys.argv[7]
def ts(text):
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
lines = []
for l in open(f"{work}/master.log"):
    try:
        j = json.loads(l)
    except ValueError:
        continue
    lines.append((ts(j["ts"]), j["msg"]))
def first(pattern, after=0.0):
    for t, m in lines:
        if t >= after and re.search(pattern, m):
            return t, m
    sys.exit(f"recovery: no master log line matches {pattern!r}; see {work}/master.log")
ended, _ = first(rf"allocation {re.escape(old)} of task .* terminated")
queued, msg = first(r"allocation (\S+) queued", ended)
new = re.search(r"allocation (\S+) queued", msg).group(1)
placed, _ = first(rf"allocation {re.escape(new)} started on agent")
running = [t for t, m in lines if re.search(rf"allocation {re.escape(new)} rank \d+ running", m)]
metric, msg = first(rf"allocation {re.escape(new)}: first metrics, at (\d+) batches")
first_batch = int(re.search(r"at (\d+) batches", msg).group(1))
started = max(running[:2]) if len(running) >= 2 else placed
def stamp(text):
    return ts(text)
metrics = json.load(open(f"{work}/metrics.json"))["metrics"]
before = [m["batches"] for m in metrics if stamp(m["reported_at"]) <= killed_at]
cps = json.load(open(f"{work}/checkpoints.json")).get("checkpoints", [])
saved = [c["batches"] for c in cps if stamp(c.get("reported_at") or c.get("created_at") or "1970-01-01T00:00:00Z") <= killed_at]
resumed = max(saved, default=0)
logs = [l for l in json.load(open(f"{work}/trial-logs.json"))["logs"] if l["allocation_id"] == new]
def line_at(pattern):  # the last rank's line, in seconds
    ts = [l["ts_ms"] / 1000 for l in logs if re.search(pattern, l["line"])]
    return max(ts) if len(ts) >= 2 else None
joined, restored = line_at(r"^digits: rank \d of 2 "), line_at(r"^digits: resumed from checkpoint")
split = {}
if joined and restored:
    split = {"process_start": joined - started, "restore": restored - joined, "first_batches": metric - restored}
out = {"fault": fault, "setting": setting, "load1": load, **split, "victim": victim, "old": old, "new": new,
       "detection": ended - killed_at, "rescheduling": placed - ended, "start": started - placed,
       "first_metric": metric - started, "total": metric - killed_at,
       "queued_after_end": queued - ended, "reported_before_kill": max(before, default=0),
       "resumed_at": resumed, "first_batch": first_batch,
       "lost_batches": max(before, default=0) - resumed}
print(json.dumps(out))
print("recovery: " + json.dumps(out), file=sys.stderr)
PY
