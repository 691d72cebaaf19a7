"""Tables of bench/collectives.sh from the `sweep` and `fusion` lines its
programs printed (allreduce_sweep, torch_allreduce.py, mpi_allreduce).

Bus bandwidth is NCCL's convention: bytes x 2(n-1)/n / time, which for 2
ranks is the buffer size over the median time; the limits (tcp, memcpy) are
the buffer size over their median time.
"""

import sys
from collections import defaultdict

COLUMNS = [
    ("ringmaster", "Ringmaster (auto: shared memory)"),
    ("ringmaster-gloo", "Ringmaster (gloo)"),
    ("gloo", "Gloo API"),
    ("torch-gloo", "torch.distributed gloo"),
    ("openmpi", "OpenMPI (shared memory)"),
    ("openmpi-tcp", "OpenMPI (TCP)"),
    ("tcp", "loopback TCP limit"),
    ("memcpy", "memcpy limit"),
]
RANKS = 2


def size_label(nbytes):
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= scale:
            return f"{nbytes // scale} {unit}"
    return f"{nbytes} B"


def main(path):
    sweeps = defaultdict(dict)  # impl -> bytes -> median us
    fusion = {}
    for line in open(path):
        parts = line.split()
        if parts and parts[0] == "sweep":
            sweeps[parts[1]][int(parts[2])] = float(parts[4])
        elif parts and parts[0] == "fusion":
            fusion[parts[1]] = (int(parts[2]), int(parts[3]), float(parts[4]), float(parts[5]))
    columns = [(k, title) for k, title in COLUMNS if k in sweeps]
    sizes = sorted({b for v in sweeps.values() for b in v})

    def busbw(impl, nbytes):
        us = sweeps[impl].get(nbytes)
        if us is None:
            return None
        factor = 1.0 if impl in ("tcp", "memcpy") else 2.0 * (RANKS - 1) / RANKS
        return nbytes * factor / (us * 1e-6) / 1e9

    print(f"Allreduce bus bandwidth, GB/s (median), {RANKS} ranks on this host:")
    print()
    print("| size | " + " | ".join(t for _, t in columns) + " | Ringmaster / torch |")
    print("| ---: | " + " | ".join("---:" for _ in columns) + " | ---: |")
    for nbytes in sizes:
        cells = []
        for impl, _ in columns:
            bw = busbw(impl, nbytes)
            cells.append("" if bw is None else f"{bw:.2f}")
        ours, torch_bw = busbw("ringmaster", nbytes), busbw("torch-gloo", nbytes)
        ratio = f"{ours / torch_bw:.2f}x" if ours and torch_bw else ""
        print(f"| {size_label(nbytes)} | " + " | ".join(cells) + f" | {ratio} |")
    if fusion:
        print()
        print("Tensor fusion: average of 200 tensors of 100 KiB (median ms):")
        print()
        print("| backend | one allreduce each | fused (25 MiB buckets) | fused / unfused |")
        print("| --- | ---: | ---: | ---: |")
        for impl, (n, nbytes, unfused, fused) in fusion.items():
            print(f"| {impl} | {unfused / 1e3:.1f} | {fused / 1e3:.1f} | {fused / unfused:.2f} |")


if __name__ == "__main__":
    main(sys.argv[1])
