"""torch.distributed's gloo backend over the sizes allreduce_sweep uses: the
peer a PyTorch user has. Prints the same `sweep` lines (median and minimum
microseconds of an in-place all_reduce of float32, after two warm-ups, every
run preceded by a barrier), from rank 0 of processes spawned on this host.

    /usr/bin/python3 bench/torch_allreduce.py [--ranks 2] [--min-bytes 4096] [--max-bytes 268435456]
"""

import argparse
import os
import socket
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def iterations(nbytes):
    return max(5, min(200, (256 << 20) // nbytes))


def rank_main(rank, world, port, min_bytes, max_bytes, label):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")  # loopback, like the other peers
    dist.init_process_group("gloo", rank=rank, world_size=world)
    want = float(world * (world + 1) // 2)
    nbytes = min_bytes
    while nbytes <= max_bytes:
        data = torch.empty(nbytes // 4, dtype=torch.float32)
        times = []
        for i in range(iterations(nbytes) + 2):
            data.fill_(rank + 1)
            dist.barrier()
            t0 = time.perf_counter()
            dist.all_reduce(data)
            took = (time.perf_counter() - t0) * 1e6
            if i >= 2:
                times.append(took)
            if data[0].item() != want or data[-1].item() != want:
                sys.exit(f"rank {rank}: wrong sum at {nbytes} bytes")
        times.sort()
        if rank == 0:
            print(f"sweep {label} {nbytes} {len(times)} {times[len(times) // 2]:.1f} {times[0]:.1f}", flush=True)
        nbytes *= 4
    dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--min-bytes", type=int, default=4096)
    parser.add_argument("--max-bytes", type=int, default=256 << 20)
    parser.add_argument("--label", default="torch-gloo")
    args = parser.parse_args()
    mp.spawn(rank_main, args=(args.ranks, free_port(), args.min_bytes, args.max_bytes, args.label),
             nprocs=args.ranks, join=True)


if __name__ == "__main__":
    main()
