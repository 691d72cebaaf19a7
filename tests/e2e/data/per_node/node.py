"""One process per node (per-node launch): prints what the agent gave it,
then starts one worker per slot of its node itself, as a launcher does, each
under `determined.launch.wrap_rank` so that its lines are filed under its
rank, and exits 0 when all of them did. Used by
tests/e2e/per_node_launch_e2e_test.cc."""
import os
import subprocess
import sys

KEYS = ["MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "NODE_RANK", "GROUP_RANK", "LOCAL_WORLD_SIZE", "NNODES",
        "RING_SLOT_IDS", "RING_CONTAINER_ADDRS", "RING_CONTAINER_RANK", "RING_LAUNCH", "RANK", "LOCAL_RANK"]
print("node env " + " ".join(k + "=" + os.environ.get(k, "<unset>") for k in KEYS), flush=True)

node = int(os.environ["NODE_RANK"])
local = int(os.environ["LOCAL_WORLD_SIZE"])
workers = []
for i in range(local):
    rank = node * local + i
    env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(i))
    workers.append(subprocess.Popen(
        [sys.executable, "-m", "determined.launch.wrap_rank", str(rank), "--", "/bin/sh", "-c",
         'echo "worker rank $RANK of $WORLD_SIZE"'],
        env=env))
codes = [w.wait() for w in workers]
print("node", node, "workers exited", codes, flush=True)
sys.exit(0 if all(c == 0 for c in codes) else 1)
