#!/usr/bin/env bash
# A data-parallel training step of 2 ranks on two "machines" joined by a
# 1 Gbit/s link (network namespaces from deploy/netns-cluster.sh, root
# only): the runtime's DistributedModule (train_step_bench, C++ libtorch)
# against PyTorch's DistributedDataParallel (torch_train_step.py), both over
# Gloo, on the digits CNN and on a synthetic MLP. Prints a markdown table.
#
#   bench/training_step.sh [BUILD_DIR] [--rate 1gbit] [--steps 100]     # about 3 minutes
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
rate=1gbit
steps=100
while [ $# -gt 0 ]; do
  case $1 in
    --rate) rate=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    *) build=$1; shift ;;
  esac
done
netns=$root/deploy/netns-cluster.sh
bench=$build/bin/train_step_bench
# It exists when libtorch was found at configure time.
if ninja -C "$build" -t query train_step_bench >/dev/null 2>&1; then
  cmake --build "$build" --target train_step_bench >&2
fi
[ -x "$bench" ] || { echo "training_step: $bench was not built (it needs libtorch)" >&2; exit 1; }
"$netns" check

name=rtstep$((RANDOM % 10))
"$netns" up "$name" 2 --rate "$rate" --subnet 10.214.$((RANDOM % 250 + 1)) >/dev/null
work=$(mktemp -d /tmp/ring-train-step-XXXXXX)
trap '"$netns" down "$name"; rm -rf "$work"' EXIT
addr0=$("$netns" addr "$name" 0)
addr1=$("$netns" addr "$name" 1)
results=$work/results

# Both ranks at once, each in its node; rank 0's line goes to the results.
run_pair() {
  local label=$1
  shift
  "$@" 0 >>"$results" &
  local first=$!
  "$@" 1 >/dev/null
  wait "$first" || { echo "training_step: $label failed" >&2; exit 1; }
}

ringmaster_rank() {
  local model=$1 store=$2 rank=$3 addr
  addr=$([ "$rank" -eq 0 ] && echo "$addr0" || echo "$addr1")
  ip netns exec "$name-$rank" env OMP_NUM_THREADS=1 "$bench" --model "$model" --rank "$rank" --world 2 \
    --store "$store" --address "$addr" --steps "$steps"
}

ddp_rank() {
  local model=$1 port=$2 rank=$3
  ip netns exec "$name-$rank" env OMP_NUM_THREADS=1 GLOO_SOCKET_IFNAME=eth0 RANK="$rank" WORLD_SIZE=2 \
    MASTER_ADDR="$addr0" MASTER_PORT="$port" /usr/bin/python3 "$root/bench/torch_train_step.py" \
    --model "$model" --steps "$steps"
}

port=29600
for model in cnn mlp; do
  echo "training_step: $model, ringmaster" >&2
  mkdir -p "$work/store-$model"
  run_pair "ringmaster $model" ringmaster_rank "$model" "$work/store-$model"
  echo "training_step: $model, torch DDP" >&2
  run_pair "torch DDP $model" ddp_rank "$model" "$port"
  port=$((port + 1))
done

echo "Training step, 2 ranks in network namespaces joined at $rate (median and mean ms over $steps steps):"
echo
echo "| model | Ringmaster median | Ringmaster mean | torch DDP median | torch DDP mean | Ringmaster / DDP (median) | Ringmaster / DDP (mean) | allreduce time | of it exposed |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for model in cnn mlp; do
  read -r _ _ _ rm_median rm_mean rm_wait rm_reduce < <(grep "^step $model ringmaster " "$results")
  read -r _ _ _ ddp_median ddp_mean < <(grep "^step $model torch-ddp " "$results")
  ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
  echo "| $model | $rm_median | $rm_mean | $ddp_median | $ddp_mean | $(ratio "$rm_median" "$ddp_median") |" \
    "$(ratio "$rm_mean" "$ddp_mean") | $rm_reduce | $rm_wait |"
done
echo
echo "allreduce time: the runtime's allreduces per step (mean ms); of it exposed: the training thread waiting"
echo "for the last buckets after backward (mean ms), the rest ran while backward was computing."
