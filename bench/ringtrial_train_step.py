"""One rank of data-parallel training steps through the runtime's Python
module, ringtrial_ddp.DistributedModule over a ringtrial.ProcessGroup (gloo):
the peer of torch_train_step.py (PyTorch DDP) and train_step_bench (C++), with
the same models, batch sizes, optimizer and step count (see
bench/training_step.sh).

    PYTHONPATH=build/python /usr/bin/python3 bench/ringtrial_train_step.py --model cnn|mlp --overlap sync|cross \\
        --rank R --world W --store DIR --address ADDR [--steps N] [--piece-kib K]

Ranks meet through a file store in DIR (a directory every rank sees) and
connect from ADDR, an address of this rank's host. --overlap sync averages
every gradient (while backward runs) and then steps; cross applies each
layer's update as the next forward reaches it (the cnn's 36 KiB of gradients
are one 1 MiB piece: its forward waits for all of them unless --piece-kib is
smaller; the mode and piece count go to stderr). Rank 0 prints
`step MODEL ringtrial-py-MODE MEDIAN_MS MEAN_MS` over the steps after 5
warm-ups.
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
    args = parser.parse_args()

    torch.set_num_threads(1)
    torch.manual_seed(1234 + args.rank)  # every rank its own data; rank 0's weights for all
    info = ringtrial.RankInfo(args.rank, args.world, agent_id=f"node-{args.rank}", address=args.address)
    group = ringtrial.ProcessGroup(info, ringtrial.file_store(args.store), backend="gloo", rendezvous_timeout_s=120.0)
    if args.model == "cnn":
        model, x, y = cnn(), torch.rand(32, 1, 8, 8), torch.randint(0, 10, (32,))
    else:
        model, x, y = mlp(), torch.randn(64, 1024), torch.randint(0, 10, (64,))
    ddp = ringtrial_ddp.DistributedModule(model, group, lambda p: torch.optim.SGD(p, lr=0.01, momentum=0.9),
                                          overlap=args.overlap, piece_bytes=args.piece_kib << 10)

    times = []
    for step in range(args.steps + 5):
        t0 = time.perf_counter()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        ddp.step()
        if step >= 5:
            times.append((time.perf_counter() - t0) * 1e3)
    ddp.finish()
    ddp.close()
    group.barrier(timeout_s=60.0)
    if args.rank == 0:
        print(f"step {args.model} ringtrial-py-{args.overlap} {statistics.median(times):.2f} "
              f"{statistics.mean(times):.2f}", flush=True)


if __name__ == "__main__":
    main()
