#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ with clang into build-fuzz/ (only
# they and the sources they need) and runs each for N seconds on a copy of
# its seed corpus. Fails, naming the crashing input and how to reproduce it,
# on any finding: a crash, a sanitizer report, a failed check, a timeout or
# running out of memory.
#   deploy/fuzz.sh [--seconds N]    (default 20 per target)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

seconds=20
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds=${2:?--seconds needs a number}; shift 2 ;;
    --seconds=*) seconds=${1#--seconds=}; shift ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "fuzz: unknown argument $1 (use --seconds N)" >&2; exit 2 ;;
  esac
done
case "$seconds" in ''|*[!0-9]*) echo "fuzz: --seconds needs a whole number, got $seconds" >&2; exit 2 ;; esac

targets=(fuzz_config fuzz_agent_protocol fuzz_api fuzz_archive)
build=build-fuzz
if [ ! -f "$build/build.ninja" ]; then
  CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DRING_FUZZ=ON -DCMAKE_BUILD_TYPE=None >/dev/null
fi
cmake --build "$build" --target fuzz_all -j "$(nproc 2>/dev/null || echo 2)"

work=$(mktemp -d "${TMPDIR:-/tmp}/ring-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
failed=()
for t in "${targets[@]}"; do
  corpus=$work/corpus/$t
  artifacts=$work/artifacts/$t
  mkdir -p "$corpus" "$artifacts" "$work/tmp/$t"
  for seeds in "fuzz/corpus/$t" "$build/fuzz/corpus/$t"; do
    if [ -d "$seeds" ]; then find "$seeds" -maxdepth 1 -type f ! -name '.*' -exec cp {} "$corpus/" \;; fi
  done
  echo "fuzz: $t for ${seconds}s ($(find "$corpus" -type f | wc -l) seeds)"
  log=$work/$t.log
  if TMPDIR=$work/tmp/$t "$build/fuzz/$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="$artifacts/" "$corpus" >"$log" 2>&1; then
    grep -E '^stat::number_of_executed_units|^Done ' "$log" | sed "s/^/fuzz: $t: /" || true
    continue
  fi
  failed+=("$t")
  tail -n 60 "$log" >&2
  mkdir -p "$root/$build/findings"
  for crash in "$artifacts"/*; do
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
echo "fuzz: no findings (${#targets[@]} targets, ${seconds}s each)"
