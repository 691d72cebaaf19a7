#!/usr/bin/env bash
# Configures and builds into build/ (Ninja, ccache when present): everything,
# or the targets named, e.g. `deploy/build.sh quickstart` or
# `deploy/build.sh svm_model`.
set -euo pipefail
cd "$(dirname "$0")/.."
build_type=${RING_BUILD_TYPE:-RelWithDebInfo}
if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE="$build_type" >/dev/null
fi
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build build -j "$(nproc 2>/dev/null || echo 2)" "${targets[@]}"
