#!/usr/bin/env bash
# Installs dependencies, builds everything and runs every test suite
# (unit, integration, e2e). Extra arguments go to ctest, e.g. `-L unit`.
set -euo pipefail
cd "$(dirname "$0")/.."

./deploy/install-deps.sh
./deploy/build.sh

jobs=$(nproc 2>/dev/null || echo 2)
ctest --test-dir build --output-on-failure --no-tests=error -j "$jobs" "$@"
./deploy/fuzz.sh --seconds 20
