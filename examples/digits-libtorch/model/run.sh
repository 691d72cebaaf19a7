#!/bin/sh
# Launcher of the digits-libtorch example (the experiment's entrypoint: `sh run.sh`).
# One thread per rank for torch and BLAS unless the experiment says otherwise
# (OpenBLAS reads OPENBLAS_NUM_THREADS only when it loads), and a padded
# malloc heap (below). The trial binary
# is taken from, in order:
#   1. ./digits_trial beside this script: the model folder the build stages
#      at build/examples/digits-libtorch/model carries the binary,
#      libringtrial and libringtrial_torch (libtorch itself comes from the
#      agent's system: Debian's libtorch1.13);
#   2. $RING_EXAMPLES_BIN/digits_trial (set it in environment.variables);
#   3. digits_trial on PATH.
set -eu
# glibc's malloc gives the top of its heap back to the system whenever enough
# of it is free, and a training step that frees its activations can land
# there: the next step faults the same pages in again. Whether it does depends
# on where earlier allocations fell, so the same binary and seed took 2.7 s or
# 3.5 s (0.05 s or 0.7 s of it in the kernel, 20,000 or 470,000 page faults
# for 3,000 steps). 64 MiB of padding at the top keeps those pages.
export MALLOC_TOP_PAD_="${MALLOC_TOP_PAD_:-67108864}"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
export OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-1}"
here=$(cd "$(dirname "$0")" && pwd)
if [ -f "$here/digits_trial" ]; then
  chmod +x "$here/digits_trial" 2>/dev/null || true
  exec "$here/digits_trial" "$@"
fi
if [ -n "${RING_EXAMPLES_BIN:-}" ] && [ -x "$RING_EXAMPLES_BIN/digits_trial" ]; then
  exec "$RING_EXAMPLES_BIN/digits_trial" "$@"
fi
if command -v digits_trial >/dev/null 2>&1; then
  exec digits_trial "$@"
fi
echo "run.sh: digits_trial not found: submit the staged folder build/examples/digits-libtorch/model" \
     "(built when CMake finds libtorch), or set environment.variables.RING_EXAMPLES_BIN to the folder" \
     "holding digits_trial" >&2
exit 127
