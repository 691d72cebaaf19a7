#!/usr/bin/env bash
# Installs dependencies, builds everything and runs every test suite
# (unit, integration, e2e), then the fuzz targets. Extra arguments go to
# ctest, e.g. `-L unit`.
set -euo pipefail
cd "$(dirname "$0")/.."

# The Debian packages first (the fuzz targets need clang), then the fuzz
# targets start, then Node's packages: npm ci (16 s) waits on the disk and
# the registry about half the time, which the fuzz build takes.
./deploy/install-deps.sh --system

# The fuzz targets (fuzz/, clang with sanitizers, build-fuzz/) compile and
# then run at the lowest priority from the start: they take what the main
# build leaves (its configure step, its links) and what the suites leave
# (they spend about half their time waiting on processes and sockets). Their
# own session, so they can be stopped as a group, is its own scheduling group
# (autogroup), whose niceness is set too: `nice` alone ranks a process only
# within its group. Each target fuzzes 10 s here, every seed replayed first
# (deploy/fuzz.sh alone: 20 s, or as long as asked); an input is a finding
# after 60 s, not 10, as a target waiting for the CPU is slow but not stuck.
fuzz_log=$(mktemp "${TMPDIR:-/tmp}/ring-fuzz.XXXXXX")
setsid bash -c 'echo 19 >/proc/self/autogroup 2>/dev/null; exec nice -n 19 ./deploy/fuzz.sh --seconds 10 --timeout 60' \
  >"$fuzz_log" 2>&1 &
fuzz=$!
trap 'kill -- -"$fuzz" 2>/dev/null || true; rm -f "$fuzz_log"' EXIT

./deploy/install-deps.sh --node
./deploy/build.sh
# The systemd units, rendered against this build (skipped without systemd-analyze).
./deploy/verify-units.sh build

jobs=$(nproc 2>/dev/null || echo 2)
status=0
ctest --test-dir build --output-on-failure --no-tests=error -j "$jobs" "$@" || status=$?
if ! wait "$fuzz"; then
  cat "$fuzz_log" >&2
  echo "test: the fuzz targets did not build or found something (output above)" >&2
  exit 1
fi
grep '^fuzz: ' "$fuzz_log" || true
[ "$status" = 0 ] || exit "$status"
