#!/usr/bin/env bash
# Checkpoint stall (bench/checkpoint_bench.py): ringtrial's save_async
# against a synchronous torch.save + fsync of the same state, the time to
# copy the state in memory and the disk's fsync'd bandwidth (dd), for
# states of 64 MiB, 512 MiB and 2 GiB; restore against reading the files.
# Prints a markdown table.
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
