#!/bin/sh
# Launcher of the svm example (the experiment's entrypoint: `sh run.sh`).
# The trial binary is taken from, in order:
#   1. ./svm_trial beside this script: the model folder the build stages at
#      build/examples/svm/model carries the binary and libringtrial (found
#      through RPATH $ORIGIN), so nothing has to be installed on the agents;
#   2. $RING_EXAMPLES_BIN/svm_trial (set it in environment.variables);
#   3. svm_trial on PATH.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
if [ -f "$here/svm_trial" ]; then
  chmod +x "$here/svm_trial" 2>/dev/null || true
  exec "$here/svm_trial" "$@"
fi
if [ -n "${RING_EXAMPLES_BIN:-}" ] && [ -x "$RING_EXAMPLES_BIN/svm_trial" ]; then
  exec "$RING_EXAMPLES_BIN/svm_trial" "$@"
fi
if command -v svm_trial >/dev/null 2>&1; then
  exec svm_trial "$@"
fi
echo "run.sh: svm_trial not found: submit the staged folder build/examples/svm/model, or set" \
     "environment.variables.RING_EXAMPLES_BIN to the folder holding svm_trial" >&2
exit 127
