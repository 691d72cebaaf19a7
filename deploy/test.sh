#!/usr/bin/env bash
# Installs dependencies, builds everything and runs every test suite
# (unit, integration, e2e), then the fuzz targets. Extra arguments go to
# ctest, e.g. `-L unit`.
set -euo pipefail
cd "$(dirname "$0")/.."

./deploy/install-deps.sh

# The fuzzing tree (clang with sanitizers, build-fuzz/) compiles at the
# lowest priority from the start: it takes what the main build leaves
# (its configure step, its links) and what the suites leave (they spend
# about a third of their time waiting on processes and sockets). Its own
# session, so it can be stopped as a group, is its own scheduling group
# (autogroup), whose niceness is set too: `nice` alone ranks a process only
# within its group. The fuzzers themselves run after the suites, at full
# priority, for their whole time.
fuzz_build_log=$(mktemp "${TMPDIR:-/tmp}/ring-fuzz-build.XXXXXX")
setsid bash -c 'echo 19 >/proc/self/autogroup 2>/dev/null; exec nice -n 19 ./deploy/fuzz.sh --build-only' \
  >"$fuzz_build_log" 2>&1 &
fuzz_build=$!
trap 'kill -- -"$fuzz_build" 2>/dev/null || true; rm -f "$fuzz_build_log"' EXIT

./deploy/build.sh

jobs=$(nproc 2>/dev/null || echo 2)
status=0
ctest --test-dir build --output-on-failure --no-tests=error -j "$jobs" "$@" || status=$?
if ! wait "$fuzz_build"; then
  cat "$fuzz_build_log" >&2
  echo "test: the fuzz targets did not build (output above)" >&2
  exit 1
fi
[ "$status" = 0 ] || exit "$status"
./deploy/fuzz.sh --seconds 20
