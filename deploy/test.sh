#!/usr/bin/env bash
# Installs dependencies, builds everything and runs every test suite
# (unit, integration, e2e). Extra arguments go to ctest, e.g. `-L unit`.
set -euo pipefail
cd "$(dirname "$0")/.."

./deploy/install-deps.sh
./deploy/build.sh

jobs=$(nproc 2>/dev/null || echo 2)
# A test that fails is run once more before the suite fails (ctest names it
# either way): Gloo's loopback connect has been seen to fail once under the
# parallel load of the whole suite, never alone.
ctest --test-dir build --output-on-failure --no-tests=error -j "$jobs" --repeat until-pass:2 "$@"
./deploy/fuzz.sh --seconds 20
