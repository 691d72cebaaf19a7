#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ with clang into build-fuzz/ (only
# they and the sources they need) and runs each for N seconds on a copy of
# its seed corpus, as many at a time as the machine has cores. Fails, naming
# the crashing input and how to reproduce it, on any finding: a crash, a
# sanitizer report, a failed check, a timeout or running out of memory.
#   deploy/fuzz.sh [--seconds N] [--jobs N]   (default 20 s per target, nproc at a time)
#   deploy/fuzz.sh --timeout N                (an input taking N s is a finding; default 10)
#   deploy/fuzz.sh --build-only               (build the targets, run nothing)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

seconds=20
timeout=10
jobs=$(nproc 2>/dev/null || echo 2)
build_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds=${2:?--seconds needs a number}; shift 2 ;;
    --seconds=*) seconds=${1#--seconds=}; shift ;;
    --jobs) jobs=${2:?--jobs needs a number}; shift 2 ;;
    --jobs=*) jobs=${1#--jobs=}; shift ;;
    --timeout) timeout=${2:?--timeout needs a number}; shift 2 ;;
    --timeout=*) timeout=${1#--timeout=}; shift ;;
    --build-only) build_only=1; shift ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "fuzz: unknown argument $1 (use --seconds N, --jobs N, --timeout N or --build-only)" >&2; exit 2 ;;
  esac
done
case "$seconds" in ''|*[!0-9]*) echo "fuzz: --seconds needs a whole number, got $seconds" >&2; exit 2 ;; esac
case "$timeout" in ''|0|*[!0-9]*) echo "fuzz: --timeout needs a positive whole number, got $timeout" >&2; exit 2 ;; esac
case "$jobs" in ''|0|*[!0-9]*) echo "fuzz: --jobs needs a positive whole number, got $jobs" >&2; exit 2 ;; esac

targets=(fuzz_config fuzz_agent_protocol fuzz_agent_enrolment fuzz_api fuzz_archive)
build=build-fuzz
if [ ! -f "$build/build.ninja" ]; then
  CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DRING_FUZZ=ON -DCMAKE_BUILD_TYPE=None >/dev/null
fi
cmake --build "$build" --target fuzz_all -j "$(nproc 2>/dev/null || echo 2)"

[ "$build_only" = 1 ] && exit 0

work=$(mktemp -d "${TMPDIR:-/tmp}/ring-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT

# One target on a copy of its seeds; its output goes to $work/<target>.log
# and its exit status to $work/<target>.rc.
fuzz_one() {
  local t=$1 corpus=$work/corpus/$1 artifacts=$work/artifacts/$1 rc=0
  mkdir -p "$corpus" "$artifacts" "$work/tmp/$t"
  for seeds in "fuzz/corpus/$t" "$build/fuzz/corpus/$t"; do
    if [ -d "$seeds" ]; then find "$seeds" -maxdepth 1 -type f ! -name '.*' -exec cp {} "$corpus/" \;; fi
  done
  echo "fuzz: $t for ${seconds}s ($(find "$corpus" -type f | wc -l) seeds)"
  TMPDIR=$work/tmp/$t "$build/fuzz/$t" -max_total_time="$seconds" -timeout="$timeout" -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$artifacts/" "$corpus" >"$work/$t.log" 2>&1 || rc=$?
  echo "$rc" >"$work/$t.rc"
}

running=0
for t in "${targets[@]}"; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  fuzz_one "$t" &
  running=$((running + 1))
done
wait

failed=()
for t in "${targets[@]}"; do
  if [ "$(cat "$work/$t.rc" 2>/dev/null || echo 1)" = 0 ]; then
    grep -E '^stat::number_of_executed_units|^Done ' "$work/$t.log" | sed "s/^/fuzz: $t: /" || true
    continue
  fi
  failed+=("$t")
  tail -n 60 "$work/$t.log" >&2
  mkdir -p "$root/$build/findings"
  for crash in "$work/artifacts/$t"/*; do
    [ -e "$crash" ] || continue
    kept=$root/$build/findings/$t-$(basename "$crash")
    cp "$crash" "$kept"
    echo "fuzz: $t: FINDING, input kept at $kept" >&2
    echo "fuzz:   reproduce: $build/fuzz/$t $kept" >&2
  done
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: findings in ${failed[*]} (fuzz/README.md says how to turn one into a regression test)" >&2
  exit 1
fi
echo "fuzz: no findings (${#targets[@]} targets, ${seconds}s each, ${jobs} at a time)"
