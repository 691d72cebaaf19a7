"""One rank of data-parallel training steps through the runtime's Python
module, ringtrial_ddp.DistributedModule over a ringtrial.ProcessGroup (gloo):
the peer of torch_train_step.py (PyTorch DDP) and train_step_bench (C++), with
the same models, batch sizes, optimizer and step count (see
bench/training_step.sh).

    PYTHONPATH=build/python /usr/bin/python3 bench/ringtrial_train_step.py --model cnn|mlp --overlap sync|cross \\
        --rank R --world W --store DIR --address ADDR [--steps N] [--piece-kib K] \\
        [--node K --local-rank L --local-world M] [--backend gloo|auto] [--compress none|fp16|bf16]

Ranks meet through a file store in DIR (a directory every rank sees) and
connect from ADDR, an address of this rank's host (node K, as local rank L
of M there; by default every rank is a node of its own). --overlap sync averages
every gradient (while backward runs) and then steps; cross applies each
layer's update as the next forward reaches it (the cnn's 36 KiB of gradients
are one 1 MiB piece: its forward waits for all of them unless --piece-kib is
smaller; the mode and piece count go to stderr). Rank 0 prints
`step MODEL ringtrial-py-MODE[-COMPRESS] MEDIAN_MS MEAN_MS WAIT_MS REDUCE_MS`
over the steps after 5 warm-ups, as train_step_bench does: MODE the step
taken (sync or cross), WAIT_MS the training thread waiting for averages and
REDUCE_MS the reducer's communication (pieces and agreements), per step.
"""

import argparse
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.append(os.path.join(ROOT, "build", "python"))  # after PYTHONPATH: a build named there wins

import torch  # noqa: E402
from torch import nn  # noqa: E402

import ringtrial  # noqa: E402
import ringtrial_ddp  # noqa: E402
from torch_train_step import cnn, mlp  # noqa: E402  (the same models)


COMPRESSION = {"none": "none", "fp16": "float16", "bf16": "bfloat16"}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=["cnn", "mlp"], default="cnn")
    parser.add_argument("--overlap", choices=["sync", "cross"], default="cross")
    parser.add_argument("--rank", type=int, required=True)
    parser.add_argument("--world", type=int, default=2)
    parser.add_argument("--store", required=True)
    parser.add_argument("--address", default="127.0.0.1")
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--piece-kib", type=int, default=1024)
    parser.add_argument("--node", type=int, default=-1, help="this rank's host (default: the rank)")
    parser.add_argument("--local-rank", type=int, default=0)
    parser.add_argument("--local-world", type=int, default=1)
    parser.add_argument("--backend", choices=["gloo", "auto"], default="gloo")
    parser.add_argument("--compress", choices=list(COMPRESSION), default="none")
    args = parser.parse_args()

    torch.set_num_threads(1)
    torch.manual_seed(1234 + args.rank)  # every rank its own data; rank 0's weights for all
    node = args.rank if args.node < 0 else args.node
    info = ringtrial.RankInfo(args.rank, args.world, local_rank=args.local_rank, local_world_size=args.local_world,
                              agent_id=f"node-{node}", address=args.address)
    group = ringtrial.ProcessGroup(info, ringtrial.file_store(args.store), backend=args.backend,
                                   rendezvous_timeout_s=120.0)
    if args.model == "cnn":
        model, x, y = cnn(), torch.rand(32, 1, 8, 8), torch.randint(0, 10, (32,))
    else:
        model, x, y = mlp(), torch.randn(64, 1024), torch.randint(0, 10, (64,))
    ddp = ringtrial_ddp.DistributedModule(model, group, lambda p: torch.optim.SGD(p, lr=0.01, momentum=0.9),
                                          overlap=args.overlap, piece_bytes=args.piece_kib << 10,
                                          compression=COMPRESSION[args.compress])

    times = []
    for step in range(args.steps + 5):
        if step == 5:
            before = ddp.totals()
        t0 = time.perf_counter()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        ddp.step()
        if step >= 5:
            times.append((time.perf_counter() - t0) * 1e3)
    ddp.finish()
    after = ddp.totals()
    wait = (after["wait_ms"] - before["wait_ms"]) / args.steps
    reduce = (after["reduce_ms"] + after["agree_ms"] - before["reduce_ms"] - before["agree_ms"]) / args.steps
    ddp.close()
    group.barrier(timeout_s=60.0)
    if args.rank == 0:
        mode = "cross" if ddp.cross_step else "sync"
        compress = "" if args.compress == "none" else "-" + args.compress
        print(f"step {args.model} ringtrial-py-{mode}{compress} {statistics.median(times):.2f} "
              f"{statistics.mean(times):.2f} {wait:.2f} {reduce:.2f}", flush=True)


if __name__ == "__main__":
    main()
