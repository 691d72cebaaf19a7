#!/usr/bin/env bash
# Platform overhead: the digits-libtorch trial (one rank, one thread) under a
# real master and agent next to the same launcher and binary run bare (local
# mode: no master, metrics printed), alternating, the same number of batches
# each time.
# Both are timed around the process the same way: the time from just before
# the binary starts to just after it exits. Under the master the trial also
# reports its metrics, registers its final checkpoint and completes its
# searcher operation, which is the platform's cost. The process's CPU time
# (user + system, from the shell's `times`) is reported beside the wall time:
# it tells work the platform adds inside the process from time lost to other
# load on the machine, which moves the wall time of both runs by more than 2%.
#   bench/overhead.sh [--batches N] [--rounds N]      (BUILD_DIR, default build/)
# Prints a Markdown table on stdout; progress on stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
build=$(cd "${BUILD_DIR:-$root/build}" && pwd)
bin=$build/bin
batches=3000 rounds=3
while [ $# -gt 0 ]; do
  case $1 in
    --batches) batches=${2:?}; shift 2 ;;
    --rounds) rounds=${2:?}; shift 2 ;;
    *) echo "overhead: unknown option $1" >&2; exit 2 ;;
  esac
done
staged=$build/examples/digits-libtorch/model
[ -x "$staged/digits_trial" ] || { echo "overhead: digits-libtorch is not built (needs libtorch-dev)" >&2; exit 2; }

. bench/lib.sh
bench_init overhead
bench_start_master
bench_start_agent bench-agent 1

# The staged model folder, with the process timed the same way as the bare run.
mkdir -p "$work/times"
cp -r "$staged" "$work/model"
mv "$work/model/run.sh" "$work/model/launch.sh"
cat >"$work/model/run.sh" <<SH
t0=\$(date +%s.%N)
sh launch.sh "\$@"
rc=\$?
t1=\$(date +%s.%N)
times >"$work/times/cpu.\$RING_EXPERIMENT_ID"  # not in a pipe: a subshell has no children
echo "\$t0 \$t1 \$(tail -1 "$work/times/cpu.\$RING_EXPERIMENT_ID") \$RING_TRIAL_SEED" >"$work/times/ring.\$RING_EXPERIMENT_ID"
exit \$rc
SH
model=$(tar -C "$work/model" -czf - . | base64 -w0)
config="name: overhead\nentrypoint: sh run.sh\nhyperparameters:\n  learning_rate: 0.05\n  batch_size: 32\n  momentum: 0.9\n  report_every: 10\nsearcher:\n  name: single\n  metric: validation_accuracy\n  smaller_is_better: false\n  max_length:\n    batches: $batches\nmax_restarts: 0\nenvironment:\n  variables:\n    OMP_NUM_THREADS: '1'\n    OPENBLAS_NUM_THREADS: '1'\n"
printf '{"config":"%s","model_definition":"%s"}' "$config" "$model" >"$work/create.json"
hparams='{"learning_rate": 0.05, "batch_size": 32, "momentum": 0.9, "report_every": 10}'
echo "$hparams" >"$work/hparams.json"

: >"$work/bare.txt"
: >"$work/ring.txt"
for round in $(seq 1 "$rounds"); do
  echo "overhead: round $round, under the master" >&2
  id=$(bench_submit "$work/create.json")
  for _ in $(seq 1 6000); do [ -s "$work/times/ring.$id" ] && break; sleep 0.05; done
  [ -s "$work/times/ring.$id" ] || { echo "overhead: the trial of experiment $id did not end" >&2; tail "$work"/agent-*.log >&2; exit 1; }
  read -r t0 t1 user sys seed <"$work/times/ring.$id"
  echo "$t0 $t1 $user $sys" >>"$work/ring.txt"
  state=
  for _ in $(seq 1 100); do
    state=$(curl -fsS -H "Authorization: Bearer $token" "$url/api/v1/experiments/$id" |
      python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])')
    [ "$state" = COMPLETED ] && break
    sleep 0.1
  done
  [ "$state" = COMPLETED ] || echo "overhead: experiment $id ended $state" >&2
  # The same trial seed, so both runs compute the same steps (the seed alone
  # moves this run's time by about 5%).
  echo "overhead: round $round, bare (seed $seed)" >&2
  (
    cd "$work"
    t0=$(date +%s.%N)
    sh "$work/model/launch.sh" --hparams hparams.json --batches "$batches" --seed "$seed" \
      >"$work/bare.$round.log" 2>&1
    t1=$(date +%s.%N)
    times >"$work/times/cpu.bare"
    echo "$t0 $t1 $(tail -1 "$work/times/cpu.bare")" >>"$work/bare.txt"
  )
done

python3 - "$work" "$batches" <<'PY'
import re, statistics, sys
work, batches = sys.argv[1], int(sys.argv[2])
def seconds(text):  # the shell's times: 0m3.120000s
    m, s = re.fullmatch(r"(\d+)m([\d.]+)s", text).groups()
    return 60 * int(m) + float(s)
def runs(name):  # [(wall, cpu)]
    rows = [l.split() for l in open(f"{work}/{name}") if l.strip()]
    return [(float(t1) - float(t0), seconds(user) + seconds(sys)) for t0, t1, user, sys in rows]
bare, ring = runs("bare.txt"), runs("ring.txt")
def summary(rows, col):
    v = [r[col] for r in rows]
    return statistics.median(v), min(v), max(v)
(bw, bmin, bmax), (rw, rmin, rmax) = summary(bare, 0), summary(ring, 0)
bc, rc = summary(bare, 1)[0], summary(ring, 1)[0]
print("| run | rounds | batches | median wall s | min s | max s | wall vs bare | median CPU s | CPU vs bare |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
print(f"| bare (local mode) | {len(bare)} | {batches} | {bw:.2f} | {bmin:.2f} | {bmax:.2f} | 1.000× | {bc:.2f} | 1.000× |")
print(f"| under Ringmaster | {len(ring)} | {batches} | {rw:.2f} | {rmin:.2f} | {rmax:.2f} | {rw / bw:.3f}× | "
      f"{rc:.2f} | {rc / bc:.3f}× |")
PY
