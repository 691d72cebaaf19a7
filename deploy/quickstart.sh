#!/usr/bin/env bash
# From a fresh clone to a finished experiment: installs dependencies, builds
# what it runs (the daemons, the CLI, the quadratic example and the web UI),
# starts a master and two agents (2 CPU slots each) on this machine in the
# background, submits a search over the quadratic example (adaptive ASHA, 16
# trials), follows it to the end and prints its result and where to look.
# The CLI is signed in as the local admin; its password is in
# .ringdata/master/admin-password (for the web UI).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
dir=${RING_LOCAL_DIR:-$root/.ringdata}

./deploy/install-deps.sh
./deploy/build.sh quickstart  # only what runs below; deploy/build.sh alone builds everything

if [ -f "$dir/pids" ]; then
  echo "quickstart: a local cluster from an earlier run is still up; restarting it"
  ./deploy/local-cluster.sh stop --dir "$dir"
fi
./deploy/local-cluster.sh start --agents 2 --slots 2 --dir "$dir"
export RING_MASTER
RING_MASTER=$(cat "$dir/master.url")
ring="$root/build/bin/ring"

echo
echo "Submitting a search over the quadratic example (configs/experiments/quadratic-asha.yaml)..."
id_line=$("$ring" experiment create configs/experiments/quadratic-asha.yaml build/examples/quadratic/model)
echo "$id_line"
exp_id=$(echo "$id_line" | grep -oE '[0-9]+' | tail -n 1)

status=0
"$ring" experiment wait "$exp_id" || status=$?
echo
"$ring" experiment describe "$exp_id"
echo
echo "Web UI:        $RING_MASTER/  (this search, one curve per trial: $RING_MASTER/experiments/$exp_id;"
echo "               the cluster: $RING_MASTER/cluster)"
echo "               sign in as admin with the password in $dir/master/admin-password"
echo "CLI:           export RING_MASTER=$RING_MASTER; $ring experiment list"
echo "Stop it all:   ./deploy/local-cluster.sh stop"
exit $status
