#!/usr/bin/env bash
# Launch latency on a warm agent: submit → the trial's process running, and a
# trial's exit → the next trial running in the freed slot; next to Slurm
# (slurmctld + slurmd on this host, loopback only, private config, munge key
# and socket, in the fastest one-node configuration we found: no batch delay,
# an Epilog so a job's end schedules at once) measured the same way in the
# same run: sbatch → job running, and a job's end → the next exclusive job
# running; and submit → process running through a master whose pool is that
# Slurm (the Slurm resource manager: one job per trial, whose ringagent
# starts the trial). Each time is what the process itself wrote (date +%s.%N).
#   bench/launch.sh [--runs N]      (BUILD_DIR, default build/)
# Prints a Markdown table on stdout; progress on stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
bin=${BUILD_DIR:-$root/build}/bin
runs=20
[ "${1:-}" = "--runs" ] && runs=${2:?--runs needs a number}

. bench/lib.sh
bench_init launch
stop_munged() { [ -f "$work/slurm/munge/munged.pid" ] && kill "$(cat "$work/slurm/munge/munged.pid")" 2>/dev/null || true; }
bench_extra_cleanup=stop_munged
now() { date +%s.%N; }
wait_file() {  # path, seconds
  for _ in $(seq 1 $(($2 * 200))); do [ -s "$1" ] && return 0; sleep 0.005; done
  echo "launch: $1 never appeared" >&2
  return 1
}
# Between submissions: wait until the trial or job has left its slot, so that
# each submission finds the slot free.
ring_idle() {
  local _
  for _ in $(seq 1 600); do
    curl -fsS -H "Authorization: Bearer $token" "$url/api/v1/agents" | python3 -c '
import json, sys
agents = json.load(sys.stdin)["agents"]
sys.exit(any(s.get("allocation_id") is not None for a in agents for s in a["slots"]))' && return 0
    sleep 0.05
  done
  echo "launch: the agent's slot stayed busy" >&2
  return 1
}
slurm_idle() {
  local _
  for _ in $(seq 1 600); do [ -z "$(squeue -h -o %i)" ] && return 0; sleep 0.05; done
  echo "launch: Slurm's queue did not empty" >&2
  return 1
}

# --- Ringmaster: a master and one agent with one CPU slot ---
bench_start_master
bench_start_agent bench-agent 1

mkdir -p "$work/model" "$work/times"
cat >"$work/model/run.sh" <<SH
date +%s.%N >"$work/times/start.\$RING_EXPERIMENT_ID.\$RING_TRIAL_ID"
date +%s.%N >"$work/times/end.\$RING_EXPERIMENT_ID.\$RING_TRIAL_ID"
SH
model=$(tar -C "$work/model" -czf - . | base64 -w0)
submit() {  # searcher YAML (escaped newlines) → experiment id
  local config="name: launch\nentrypoint: sh run.sh\n$1max_restarts: 0\n"
  printf '{"config":"%s","model_definition":"%s"}' "$config" "$model" >"$work/create.json"
  bench_submit "$work/create.json"
}
single='searcher:\n  name: single\n  metric: loss\n  max_length:\n    batches: 1\n'
submit "$single" >/dev/null  # the first experiment warms the agent and the master
wait_file "$work/times/start.1.1" 30

echo "launch: ringmaster, $runs submissions" >&2
: >"$work/ring-submit.txt"
for i in $(seq 1 "$runs"); do
  t0=$(now)
  id=$(submit "$single")
  for _ in $(seq 1 6000); do compgen -G "$work/times/start.$id.*" >/dev/null && break; sleep 0.005; done
  start=$(cat "$work/times"/start."$id".*)
  echo "$t0 $start" >>"$work/ring-submit.txt"
  ring_idle
  sleep 0.1
done

echo "launch: ringmaster, $runs trials through one slot" >&2
grid="hyperparameters:\n  i:\n    type: int\n    minval: 1\n    maxval: $runs\n    count: $runs\nsearcher:\n  name: grid\n  metric: loss\n  max_length:\n    batches: 1\n"
reuse_exp=$(submit "$grid")
for _ in $(seq 1 12000); do
  [ "$(compgen -G "$work/times/end.$reuse_exp.*" | wc -l)" -ge "$runs" ] && break
  sleep 0.005
done
for f in "$work/times"/start."$reuse_exp".*; do
  echo "$(cat "$f") $(cat "${f/start./end.}")"
done | sort -n >"$work/ring-reuse.txt"

# --- Slurm on this host, as in FACTS: private conf, munge key and socket ---
slurm_ok=0 slurm_name=Slurm slurm_why=
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null; then
  slurm_why="slurm-wlm or munge is not installed (deploy/install-deps.sh installs them)"
elif [ "$(id -u)" != 0 ]; then
  slurm_why="slurmd must run as root"
else
  slurm_name="Slurm $(slurmctld -V | awk '{print $2}')"
  s=$work/slurm
  mkdir -p "$s/state" "$s/spool" "$s/munge" "$s/times"
  chmod 0755 "$s/munge"
  head -c 1024 /dev/urandom >"$s/munge/key" && chmod 0400 "$s/munge/key"
  munged -f --socket="$s/munge/socket" --key-file="$s/munge/key" --pid-file="$s/munge/munged.pid" \
    --log-file="$s/munge/munged.log" --seed-file="$s/munge/seed"
  read -r ctld_port slurmd_port < <(python3 -c '
import socket
def free():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p
a = free(); b = free()
while b == a: b = free()
print(a, b)')
  topology=$(slurmd -C | head -1 | sed 's/^NodeName=[^ ]* //')
  cat >"$s/slurm.conf" <<CONF
ClusterName=bench
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
AuthInfo=socket=$s/munge/socket
CredType=cred/munge
CommunicationParameters=NoCtldInAddrAny,NoInAddrAny
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$s/state
SlurmdSpoolDir=$s/spool
SlurmctldPidFile=$s/slurmctld.pid
SlurmdPidFile=$s/slurmd.pid
SlurmctldLogFile=$s/slurmctld.log
SlurmdLogFile=$s/slurmd.log
MailProg=/bin/true
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0,default_queue_depth=200
MinJobAge=2
Epilog=/bin/true
NodeName=localhost NodeAddr=127.0.0.1 $topology
PartitionName=bench Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
  export SLURM_CONF=$s/slurm.conf
  slurmctld -D >"$s/ctld.out" 2>&1 &
  bench_pids+=($!)
  slurmd -D -N localhost >"$s/slurmd.out" 2>&1 &
  bench_pids+=($!)
  for _ in $(seq 1 100); do sinfo -h -o %T 2>/dev/null | grep -q idle && slurm_ok=1 && break; sleep 0.1; done
  [ "$slurm_ok" = 1 ] || slurm_why="its node never became idle (see slurmctld.log and slurmd.log)"
fi
if [ "$slurm_ok" = 1 ]; then
  job() { sbatch -Q --exclusive -o /dev/null --wrap "date +%s.%N >$s/times/start.$1; date +%s.%N >$s/times/end.$1"; }
  job warm && wait_file "$s/times/end.warm" 30
  echo "launch: slurm, $runs submissions" >&2
  : >"$work/slurm-submit.txt"
  for i in $(seq 1 "$runs"); do
    t0=$(now)
    job "s$i"
    wait_file "$s/times/start.s$i" 30
    echo "$t0 $(cat "$s/times/start.s$i")" >>"$work/slurm-submit.txt"
    slurm_idle
    sleep 0.1
  done
  echo "launch: slurm, $runs jobs through one node" >&2
  for i in $(seq 1 "$runs"); do job "r$i"; done
  for i in $(seq 1 "$runs"); do wait_file "$s/times/end.r$i" 60; done
  for i in $(seq 1 "$runs"); do echo "$(cat "$s/times/start.r$i") $(cat "$s/times/end.r$i")"; done |
    sort -n >"$work/slurm-reuse.txt"
  # --- Ringmaster with a Slurm pool on the same Slurm: one job per trial ---
  echo "launch: ringmaster on slurm, $runs submissions" >&2
  r=$work/slurmrm
  mkdir -p "$r"
  (umask 077; head -c 18 /dev/urandom | base64 | tr -d '/+=\n' >"$r/admin-password")
  cat >"$r/master.yaml" <<YAML
resource_pools:
  - name: default
    resource_manager:
      type: slurm
      partition: bench
      slot_type: cpu
      slots_per_node: 1
      agent_binary: $bin/ringagent
      poll_interval_ms: 100
      single_identity: true
YAML
  "$bin/ringmaster" --config "$r/master.yaml" --listen 127.0.0.1:0 --port-file "$r/port" \
    --data-dir "$r/data" --admin-password-file "$r/admin-password" --log-level warn >"$r/master.log" 2>&1 &
  bench_pids+=($!)
  for _ in $(seq 1 100); do [ -s "$r/port" ] && break; sleep 0.1; done
  url="http://127.0.0.1:$(cat "$r/port")"
  token=$(curl -fsS -X POST "$url/api/v1/auth/login" -H "Content-Type: application/json" \
    -d "{\"username\":\"admin\",\"password\":\"$(cat "$r/admin-password")\"}" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')
  rm -f "$work/times"/start.* "$work/times"/end.*
  warm=$(submit "$single")
  wait_file "$work/times/start.$warm.1" 60
  slurm_idle
  : >"$work/slurmrm-submit.txt"
  for i in $(seq 1 "$runs"); do
    t0=$(now)
    id=$(submit "$single")
    for _ in $(seq 1 12000); do compgen -G "$work/times/start.$id.*" >/dev/null && break; sleep 0.005; done
    echo "$t0 $(cat "$work/times"/start."$id".*)" >>"$work/slurmrm-submit.txt"
    slurm_idle
    sleep 0.1
  done
else
  echo "launch: Slurm did not run: $slurm_why" >&2
  : >"$work/slurm-submit.txt"
  : >"$work/slurm-reuse.txt"
  : >"$work/slurmrm-submit.txt"
fi

python3 - "$work" "$slurm_name" "$slurm_why" <<'PY'
import statistics, sys
work, slurm_name, slurm_why = sys.argv[1:4]
def pairs(name):
    return [tuple(map(float, l.split())) for l in open(f"{work}/{name}") if l.strip()]
def submit(name):
    return [b - a for a, b in pairs(name)]
def reuse(name):
    p = pairs(name)
    return [p[i + 1][0] - p[i][1] for i in range(len(p) - 1)]
def stats(v):
    if not v:
        return None
    v = sorted(v)
    return {"median": statistics.median(v), "p90": v[int(0.9 * (len(v) - 1))], "min": v[0], "max": v[-1], "n": len(v)}
def cell(s, k):
    return f"{s[k] * 1000:.0f}" if s else "n/a"
def ratio(r, s, k):
    return f"{r[k] / s[k]:.2f}×" if r and s else "n/a"
print(f"| what | system | runs | median ms | p90 ms | min ms | max ms | median vs Slurm | p90 vs Slurm |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for what, ring_file, slurm_file, fn in [
    ("submit → process running", "ring-submit.txt", "slurm-submit.txt", submit),
    ("exit → next process in the slot", "ring-reuse.txt", "slurm-reuse.txt", reuse),
]:
    r, s = stats(fn(ring_file)), stats(fn(slurm_file))
    print(f"| {what} | Ringmaster | {r['n'] if r else 0} | {cell(r, 'median')} | {cell(r, 'p90')} | "
          f"{cell(r, 'min')} | {cell(r, 'max')} | {ratio(r, s, 'median')} | {ratio(r, s, 'p90')} |")
    if s:
        print(f"| {what} | {slurm_name} | {s['n']} | {cell(s, 'median')} | {cell(s, 'p90')} | "
              f"{cell(s, 'min')} | {cell(s, 'max')} | 1.00× | 1.00× |")
    else:
        print(f"| {what} | {slurm_name} | 0 | not run: {slurm_why} | | | | | |")
# The Slurm resource manager: Ringmaster's submit through to the trial's
# process, one Slurm job per trial, against plain sbatch of the same run.
r, s = stats(submit("slurmrm-submit.txt")), stats(submit("slurm-submit.txt"))
if r:
    print(f"| submit → process running | Ringmaster on {slurm_name} (a Slurm pool) | {r['n']} | "
          f"{cell(r, 'median')} | {cell(r, 'p90')} | {cell(r, 'min')} | {cell(r, 'max')} | "
          f"{ratio(r, s, 'median')} | {ratio(r, s, 'p90')} |")
PY
