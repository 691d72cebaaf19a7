#!/usr/bin/env bash
# Checkpoint stall (bench/checkpoint_bench.py): ringtrial's save_async
# against a synchronous torch.save + fsync of the same state, the time to
# copy the state in memory and the disk's fsync'd bandwidth (dd), for
# states of 64 MiB, 512 MiB and 2 GiB; restore against reading the files.
# Then the copy-on-write snapshot (ringtrial_torch.save_forked: a forked
# writer process, nothing copied) against the same limits, with the cost
# its copy-on-write faults add to the next in-place update of the state.
# Prints two markdown tables.
#
#   bench/checkpoint.sh [BUILD_DIR] [--sizes-mib 64,512,2048] [--runs 3] [--dir /path/on/the/disk]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
args=()
while [ $# -gt 0 ]; do
  case $1 in
    --sizes-mib | --runs | --dir) args+=("$1" "$2"); shift 2 ;;
    *) build=$1; shift ;;
  esac
done
cmake --build "$build" --target ringtrial_python >&2
PYTHONPATH=$build/python exec /usr/bin/python3 -B "$root/bench/checkpoint_bench.py" "${args[@]}"
