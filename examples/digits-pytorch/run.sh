#!/bin/sh
# Launcher of the digits-pytorch example (the experiment's entrypoint: `sh run.sh`).
# Runs train.py with Debian's Python, which has torch (python3-torch), and
# finds the ringtrial module beside this script: the model folder the build
# stages at build/examples/digits-pytorch/model carries it and libringtrial.
# One thread per rank for torch and BLAS unless the experiment says otherwise
# (OpenBLAS reads OPENBLAS_NUM_THREADS only when it loads).
set -eu
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
export OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-1}"
here=$(cd "$(dirname "$0")" && pwd)
export PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}"
exec /usr/bin/python3 "$here/train.py" "$@"
