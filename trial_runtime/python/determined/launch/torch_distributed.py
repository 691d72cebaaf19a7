"""python3 -m determined.launch.torch_distributed [--nproc_per_node N] [TORCHRUN FLAGS] [--] SCRIPT...

Starts this node's workers as torchrun does, each wrapped by wrap_rank so its
lines keep its rank: under per-node launch (RING_LAUNCH=per_node) one
worker per slot of this node (RING_SLOT_IDS), numbered after the slots of the
nodes before it (RING_CONTAINER_SLOT_COUNTS, else equal counts); under per-slot
launch this process is already one rank, and runs one worker with its own
rank. Each worker gets RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,
GROUP_RANK, GROUP_WORLD_SIZE, ROLE_RANK, ROLE_WORLD_SIZE, MASTER_ADDR and
MASTER_PORT. Other torchrun flags are ignored, saying so: the cluster sets
ranks, nodes and restarts. A SCRIPT ending in .py runs with this interpreter. When a worker
fails the others are stopped and the launcher exits with its code.
"""

import os
import signal
import subprocess
import sys
import time
from typing import Dict, List, Mapping, Optional

from determined import _env


# torchrun flags that take no value.
_TORCHRUN_SWITCHES = {"--standalone", "--no-python", "--no_python", "--run-path", "--run_path", "-m", "--module"}


def worker_envs(env: Mapping[str, str], nproc: Optional[int] = None) -> List[Dict[str, str]]:
    """The environment of each worker this node starts, in local-rank order."""
    per_node = env.get("RING_LAUNCH", "") == "per_node"
    if not per_node:
        world = _env.integer(env, "WORLD_SIZE", 1)
        local = _env.integer(env, "LOCAL_WORLD_SIZE", 1)
        nodes = max(1, -(-world // max(1, local)))
        one = dict(env)
        one.update(GROUP_RANK=str(_env.container_rank(env)), GROUP_WORLD_SIZE=str(nodes),
                   ROLE_RANK=env.get("RANK", "0"), ROLE_WORLD_SIZE=str(world))
        for name, default in (("RANK", "0"), ("WORLD_SIZE", "1"), ("LOCAL_RANK", "0"),
                              ("LOCAL_WORLD_SIZE", "1"), ("MASTER_ADDR", "127.0.0.1"), ("MASTER_PORT", "29500")):
            one.setdefault(name, default)
        return [one]
    slots = len(_env.slot_ids(env))
    local_size = nproc or slots
    node = _env.container_rank(env)
    nodes = len(_env.container_addrs(env))
    if env.get("RING_CONTAINER_SLOT_COUNTS", ""):
        counts = [int(c) for c in _env.split(env["RING_CONTAINER_SLOT_COUNTS"])]
        if nproc:
            counts = [nproc] * len(counts)
    else:
        counts = [local_size] * nodes
    first, world = sum(counts[:node]), sum(counts)
    master_addr = env.get("MASTER_ADDR") or _env.container_addrs(env)[0]
    out = []
    for local_rank in range(local_size):
        w = dict(env)
        w.update(RANK=str(first + local_rank), WORLD_SIZE=str(world), LOCAL_RANK=str(local_rank),
                 LOCAL_WORLD_SIZE=str(local_size), GROUP_RANK=str(node), GROUP_WORLD_SIZE=str(nodes),
                 ROLE_RANK=str(first + local_rank), ROLE_WORLD_SIZE=str(world), MASTER_ADDR=master_addr,
                 MASTER_PORT=env.get("MASTER_PORT", "29500"), TORCHELASTIC_RUN_ID=env.get(
                     "RING_ALLOCATION_ID", "none"))
        w.pop("RING_LAUNCH", None)  # a worker is one rank
        out.append(w)
    return out


def command(script: List[str]) -> List[str]:
    return [sys.executable, *script] if script and script[0].endswith(".py") else script


def main(argv: Optional[List[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    nproc = None
    while args and args[0].startswith("-") and args[0] != "--":
        flag = args.pop(0)
        if flag in ("-h", "--help"):
            print(__doc__.strip(), file=sys.stderr)
            return 0
        if flag == "--trust":
            continue
        if flag == "--trial":
            print("torch_distributed: --trial starts a PyTorchTrial class, which Ringmaster does not have; "
                  "give the script to run instead", file=sys.stderr)
            return 2
        name, _, value = flag.partition("=")
        if name in ("--nproc_per_node", "--nproc-per-node"):
            nproc = int(value or args.pop(0))
            continue
        # Other torchrun settings (rendezvous, nodes, restarts) come from the cluster.
        if not value and args and not args[0].startswith("-") and name not in _TORCHRUN_SWITCHES:
            value = args.pop(0)
        print(f"torch_distributed: {flag}{' ' + value if value and '=' not in flag else ''} ignored: the "
              "cluster sets ranks, nodes and restarts", file=sys.stderr)
    if args and args[0] == "--":
        args.pop(0)
    if not args:
        print("torch_distributed: no script given", file=sys.stderr)
        return 2
    procs = []
    for env in worker_envs(os.environ, nproc):
        cmd = [sys.executable, "-m", "determined.launch.wrap_rank", env["RANK"], "--", *command(args)]
        procs.append(subprocess.Popen(cmd, env=env))
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda s, _f: [p.send_signal(s) for p in procs if p.poll() is None])
    first_failure = 0
    remaining = list(procs)
    while remaining:
        for p in list(remaining):
            code = p.poll()
            if code is None:
                continue
            remaining.remove(p)
            if code != 0 and first_failure == 0:
                first_failure = code if code > 0 else 128 - code
                for other in remaining:
                    other.terminate()
        time.sleep(0.05)
    return first_failure


if __name__ == "__main__":
    sys.exit(main())
