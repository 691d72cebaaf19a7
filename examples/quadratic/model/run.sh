#!/bin/sh
# Launcher of the quadratic example (the experiment's entrypoint: `sh run.sh`).
# The trial binary is taken from, in order:
#   1. ./quadratic_trial beside this script: the model folder the build stages
#      at build/examples/quadratic/model carries the binary and libringtrial;
#   2. $RING_EXAMPLES_BIN/quadratic_trial (set it in environment.variables);
#   3. quadratic_trial on PATH.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
if [ -f "$here/quadratic_trial" ]; then
  chmod +x "$here/quadratic_trial" 2>/dev/null || true
  exec "$here/quadratic_trial" "$@"
fi
if [ -n "${RING_EXAMPLES_BIN:-}" ] && [ -x "$RING_EXAMPLES_BIN/quadratic_trial" ]; then
  exec "$RING_EXAMPLES_BIN/quadratic_trial" "$@"
fi
if command -v quadratic_trial >/dev/null 2>&1; then
  exec quadratic_trial "$@"
fi
echo "run.sh: quadratic_trial not found: submit the staged folder build/examples/quadratic/model," \
     "or set environment.variables.RING_EXAMPLES_BIN to the folder holding quadratic_trial" >&2
exit 127
