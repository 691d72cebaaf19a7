#!/usr/bin/env bash
# Data-parallel training steps on two "machines" joined by a 1 Gbit/s link
# (network namespaces from deploy/netns-cluster.sh, root only): the
# runtime's DistributedModule (train_step_bench, C++ libtorch), with its
# synchronous step and with cross-step overlap, against PyTorch's
# DistributedDataParallel (torch_train_step.py), all over Gloo, on the
# digits CNN and a synthetic MLP with 2 ranks (one per machine), and the
# MLP with 4 ranks (two per machine). Each CNN configuration runs --runs
# times (its 2 ms step is noisy), each MLP one --mlp-runs times; the table
# gives the median of the runs' median step times and their range.
# Then gradient compression: DDP's fp16 hook next to the runtime's fp16 and
# bf16 compression with error feedback, on the MLP's step time and on the
# digits accuracy after the same number of steps. Prints markdown tables.
#
#   bench/training_step.sh [BUILD_DIR] [--rate 1gbit] [--steps 40] [--runs 5] [--mlp-runs 1]   # about 10 minutes
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
rate=1gbit
steps=40
runs=5
mlp_runs=1
while [ $# -gt 0 ]; do
  case $1 in
    --rate) rate=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --mlp-runs) mlp_runs=$2; shift 2 ;;
    *) build=$1; shift ;;
  esac
done
netns=$root/deploy/netns-cluster.sh
bench=$build/bin/train_step_bench
# It exists when libtorch was found at configure time.
if ninja -C "$build" -t query train_step_bench >/dev/null 2>&1; then
  cmake --build "$build" --target train_step_bench >&2
fi
# And the Python module, for the Python rows (when pybind11 was found).
if ninja -C "$build" -t query ringtrial_python >/dev/null 2>&1; then
  cmake --build "$build" --target ringtrial_python >&2
fi
[ -x "$bench" ] || { echo "training_step: $bench was not built (it needs libtorch)" >&2; exit 1; }
"$netns" check

name=rtstep$((RANDOM % 10))
"$netns" up "$name" 2 --rate "$rate" --subnet 10.214.$((RANDOM % 250 + 1)) >/dev/null
work=$(mktemp -d /tmp/ring-train-step-XXXXXX)
trap '"$netns" down "$name"; rm -rf "$work"' EXIT
addrs=("$("$netns" addr "$name" 0)" "$("$netns" addr "$name" 1)")
results=$work/results
port=29600
serial=0

# run_world LABEL WORLD CMD...: CMD RANK NODE LOCAL_RANK LOCAL_WORLD for every
# rank at once, ranks split evenly over the two machines; rank 0's output
# lines go to the results, prefixed with LABEL.
run_world() {
  local label=$1 world=$2
  shift 2
  local per=$((world / 2)) pids=() r
  for ((r = world - 1; r >= 0; r--)); do
    if [ "$r" -eq 0 ]; then
      "$@" 0 0 0 "$per" | sed "s|^|$label |" >>"$results" &
    else
      "$@" "$r" $((r / per)) $((r % per)) "$per" >/dev/null &
    fi
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || { echo "training_step: $label failed" >&2; exit 1; }; done
}

ringmaster_rank() {
  local model=$1 overlap=$2 world=$3 store=$4 compress=$5 rank=$6 node=$7 local_rank=$8 local_world=$9
  ip netns exec "$name-$node" env OMP_NUM_THREADS=1 "$bench" --model "$model" --rank "$rank" --world "$world" \
    --store "$store" --address "${addrs[$node]}" --steps "$steps" --overlap "$overlap" --node "$node" \
    --local-rank "$local_rank" --local-world "$local_world" --backend auto --compress "$compress" "${extra[@]}"
}

ddp_rank() {
  local model=$1 world=$2 port=$3 hook=$4 rank=$5 node=$6
  ip netns exec "$name-$node" env OMP_NUM_THREADS=1 GLOO_SOCKET_IFNAME=eth0 RANK="$rank" WORLD_SIZE="$world" \
    MASTER_ADDR="${addrs[0]}" MASTER_PORT="$port" /usr/bin/python3 "$root/bench/torch_train_step.py" \
    --model "$model" --steps "$steps" --hook "$hook" "${extra[@]}"
}

ringtrial_py_rank() {
  local model=$1 overlap=$2 world=$3 store=$4 rank=$5 node=$6 local_rank=$7 local_world=$8
  ip netns exec "$name-$node" env OMP_NUM_THREADS=1 PYTHONPATH="$build/python:$root/trial_runtime/python" \
    /usr/bin/python3 "$root/bench/ringtrial_train_step.py" --model "$model" --overlap "$overlap" \
    --rank "$rank" --world "$world" --store "$store" --address "${addrs[$node]}" --node "$node" \
    --local-rank "$local_rank" --local-world "$local_world" --steps "$steps"
}

extra=()  # more arguments for every rank (the accuracy runs)
python_module=no
if [ -f "$root/bench/ringtrial_train_step.py" ] && ls "$build"/python/ringtrial*.so >/dev/null 2>&1; then
  python_module=yes
fi

# config KEY WORLD KIND MODEL ARGS...: one configuration, --runs times
# (--mlp-runs for the MLP).
config() {
  local key=$1 world=$2 kind=$3 run times=$runs
  shift 3
  [ "$1" = mlp ] && times=$mlp_runs
  for ((run = 1; run <= times; run++)); do
    echo "training_step: $key, run $run of $times" >&2
    serial=$((serial + 1))
    case $kind in
      ringmaster)
        mkdir -p "$work/store-$serial"
        run_world "$key" "$world" ringmaster_rank "$1" "$2" "$world" "$work/store-$serial" "${3:-none}" ;;
      ddp)
        port=$((port + 1))
        run_world "$key" "$world" ddp_rank "$1" "$world" "$port" "${2:-none}" ;;
      python)
        mkdir -p "$work/store-$serial"
        run_world "$key" "$world" ringtrial_py_rank "$1" "$2" "$world" "$work/store-$serial" ;;
    esac
  done
}

for model in cnn mlp; do
  config "$model/2/ddp" 2 ddp "$model"
  config "$model/2/sync" 2 ringmaster "$model" sync
  config "$model/2/cross" 2 ringmaster "$model" cross
  if [ "$python_module" = yes ]; then
    config "$model/2/py-sync" 2 python "$model" sync
    config "$model/2/py-cross" 2 python "$model" cross
  fi
done
config "mlp/4/ddp" 4 ddp mlp
config "mlp/4/sync" 4 ringmaster mlp sync
config "mlp/4/cross" 4 ringmaster mlp cross
config "mlp/2/ddp-fp16" 2 ddp mlp fp16
config "mlp/2/cross-fp16" 2 ringmaster mlp cross fp16
config "mlp/2/cross-bf16" 2 ringmaster mlp cross bf16

# Accuracy on the digits after the same number of steps, with and without
# compression (one run each: the same seeds give the same result).
digits_steps=300
extra=(--digits "$digits_steps")
saved_runs=$runs runs=1
config "digits/ddp" 2 ddp cnn
config "digits/ddp-fp16" 2 ddp cnn fp16
config "digits/sync" 2 ringmaster cnn sync
config "digits/cross" 2 ringmaster cnn cross
config "digits/cross-fp16" 2 ringmaster cnn cross fp16
config "digits/cross-bf16" 2 ringmaster cnn cross bf16
runs=$saved_runs
extra=()

# stat KEY FIELD: "median (min–max)" of FIELD (3: median step) over the runs.
stat() {
  grep "^$1 step " "$results" | awk -v f="$2" '$(f + 1) != "" { print $(f + 1) }' | sort -n |
    awk '{ v[NR] = $1 } END { if (NR == 0) { print "-"; exit }
      printf "%.2f (%.2f-%.2f)", (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), v[1], v[NR] }'
}
middle() { stat "$1" "$2" | cut -d' ' -f1; }
ratio() {
  local a b
  a=$(middle "$1" 4) b=$(middle "$2" 4)
  [ "$a" = - ] || [ "$b" = - ] && { echo -; return; }
  awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a / b }'
}

echo "Training step in network namespaces joined at $rate: median step time in ms over $steps steps after"
echo "5 warm-ups, the median of $runs runs for the CNN and $mlp_runs for the MLP (their range in brackets),"
echo "and the ratio to DDP's:"
echo
echo "| model | ranks | implementation | step ms | / DDP | allreduce ms | of it exposed ms |"
echo "| --- | ---: | --- | ---: | ---: | ---: | ---: |"
row() {
  local key=$1 model=$2 ranks=$3 what=$4
  grep -q "^$key step " "$results" || return 0
  echo "| $model | $ranks | $what | $(stat "$key" 4) | $(ratio "$key" "$model/$ranks/ddp") |" \
    "$(middle "$key" 7) | $(middle "$key" 6) |"
}
for model in cnn mlp; do
  row "$model/2/ddp" "$model" 2 "torch DDP (gloo)"
  row "$model/2/sync" "$model" 2 "Ringmaster, synchronous step"
  row "$model/2/cross" "$model" 2 "Ringmaster, cross-step"
  row "$model/2/py-sync" "$model" 2 "Ringmaster Python, synchronous step"
  row "$model/2/py-cross" "$model" 2 "Ringmaster Python, cross-step"
done
row "mlp/4/ddp" mlp 4 "torch DDP (gloo)"
row "mlp/4/sync" mlp 4 "Ringmaster, synchronous step"
row "mlp/4/cross" mlp 4 "Ringmaster, cross-step"
echo
echo "allreduce ms: communication per step (for cross-step, the pieces and the agreements on them);"
echo "of it exposed: the training thread waiting for averages. DDP reports neither."
echo
echo "Gradient compression, MLP, 2 ranks:"
echo
echo "| implementation | step ms | / DDP uncompressed | / DDP fp16 |"
echo "| --- | ---: | ---: | ---: |"
for key in mlp/2/ddp mlp/2/ddp-fp16 mlp/2/cross mlp/2/cross-fp16 mlp/2/cross-bf16; do
  echo "| ${key#mlp/2/} | $(stat "$key" 4) | $(ratio "$key" mlp/2/ddp) | $(ratio "$key" mlp/2/ddp-fp16) |"
done
echo
echo "Digits accuracy on 297 held-out records after $digits_steps steps of the CNN (2 ranks, 32 records each a step):"
echo
echo "| implementation | accuracy |"
echo "| --- | ---: |"
for key in ddp ddp-fp16 sync cross cross-fp16 cross-bf16; do
  echo "| $key | $(grep "^digits/$key accuracy " "$results" | awk '{ print $5 }') |"
done
