"""One rank of data-parallel training steps with PyTorch's
DistributedDataParallel over gloo: the peer of train_step_bench (same models,
batch sizes, optimizer and step count; see bench/training_step.sh).

    RANK=r WORLD_SIZE=w MASTER_ADDR=a MASTER_PORT=p /usr/bin/python3 torch_train_step.py --model cnn|mlp [--steps N]
        [--hook none|fp16]

--hook fp16 registers DDP's fp16 compression hook (gradients sent as float16).
--digits N trains the CNN for N steps on the digits data instead, as train_step_bench --digits
does, and rank 0 prints `accuracy cnn torch-ddp[-fp16] ACCURACY` on the held-out records.
Rank 0 prints `step MODEL torch-ddp[-fp16] MEDIAN_MS MEAN_MS` over the steps after 5 warm-ups.
"""

import argparse
import gzip
import os
import statistics
import time

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.nn.parallel import DistributedDataParallel


def cnn():
    # The digits example's CNN (examples/digits-libtorch/digits_net.cc), dropout off.
    return nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(512, 10))


def mlp():
    return nn.Sequential(nn.Linear(1024, 2048), nn.ReLU(), nn.Linear(2048, 2048), nn.ReLU(), nn.Linear(2048, 10))


DIGITS = "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz"


def digits(begin, end):
    with gzip.open(DIGITS, "rt") as f:
        rows = [[int(v) for v in line.split(",")] for line in f if line.strip()][begin:end]
    t = torch.tensor(rows)
    return (t[:, :64].float() / 16).reshape(-1, 1, 8, 8), t[:, 64].long()


def train_digits(ddp, optimizer, steps, rank, world):
    train_x, train_y = digits(0, 1500)
    mine = torch.arange(rank, 1500, world)
    for step in range(steps):
        at = mine[torch.arange(step * 32, step * 32 + 32) % len(mine)]
        optimizer.zero_grad()
        nn.functional.cross_entropy(ddp(train_x[at]), train_y[at]).backward()
        optimizer.step()
    dist.barrier()
    val_x, val_y = digits(1500, 1797)
    with torch.no_grad():
        return (ddp.module(val_x).argmax(1) == val_y).double().mean().item()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=["cnn", "mlp"], default="cnn")
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--hook", choices=["none", "fp16"], default="none")
    parser.add_argument("--digits", type=int, default=0)
    args = parser.parse_args()

    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(1234 + rank)
    if args.model == "cnn":
        model, x, y = cnn(), torch.rand(32, 1, 8, 8), torch.randint(0, 10, (32,))
    else:
        model, x, y = mlp(), torch.randn(64, 1024), torch.randint(0, 10, (64,))
    ddp = DistributedDataParallel(model)
    if args.hook == "fp16":
        ddp.register_comm_hook(None, default_hooks.fp16_compress_hook)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.05 if args.digits else 0.01, momentum=0.9)
    label = "torch-ddp" if args.hook == "none" else f"torch-ddp-{args.hook}"
    if args.digits:
        accuracy = train_digits(ddp, optimizer, args.digits, rank, dist.get_world_size())
        if rank == 0:
            print(f"accuracy cnn {label} {accuracy:.4f}", flush=True)
        dist.destroy_process_group()
        return

    times = []
    for step in range(args.steps + 5):
        t0 = time.perf_counter()
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(ddp(x), y)
        loss.backward()
        optimizer.step()
        if step >= 5:
            times.append((time.perf_counter() - t0) * 1e3)
    dist.barrier()
    if rank == 0:
        print(f"step {args.model} {label} {statistics.median(times):.2f} {statistics.mean(times):.2f}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
