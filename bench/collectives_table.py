"""Tables of bench/collectives.sh from the `sweep`, `fusion` and `coll` lines
its programs printed (allreduce_sweep, torch_allreduce.py, mpi_allreduce).

`coll OP RANKS IMPL BYTES ITERATIONS MEDIAN_US MIN_US` lines make one table
per collective: Ringmaster's shared memory against OpenMPI for 2 and 4
ranks, per size the lowest median of the rounds. Bus bandwidth as
nccl-tests: BYTES (the larger buffer) x 2(n-1)/n for allreduce, x (n-1)/n
for allgather and reduce-scatter, x 1 for broadcast, over the time.

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


BUS_FACTOR = {
    "allreduce": lambda n: 2.0 * (n - 1) / n,
    "allgather": lambda n: (n - 1) / n,
    "reduce-scatter": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0,
}
MPI_CALL = {
    "allreduce": "MPI_Allreduce",
    "allgather": "MPI_Allgather",
    "reduce-scatter": "MPI_Reduce_scatter_block",
    "broadcast": "MPI_Bcast",
}


def collective_tables(colls):
    """colls: (op, ranks, impl) -> bytes -> lowest median us."""
    for op in BUS_FACTOR:
        rank_counts = sorted({r for (o, r, _) in colls if o == op})
        if not rank_counts:
            continue
        print()
        print(f"{op}: bus bandwidth GB/s (lowest median of the rounds), shared memory, Ringmaster vs OpenMPI "
              f"{MPI_CALL[op]}:")
        print()
        header, sizes = [], set()
        for n in rank_counts:
            yield_note = " (yield when idle)" if n > 2 else ""
            header += [f"Ringmaster {n} ranks", f"OpenMPI {n} ranks{yield_note}", f"ratio {n}"]
            for impl in ("ringmaster", "openmpi"):
                sizes |= set(colls.get((op, n, impl), {}))
        print("| size | " + " | ".join(header) + " |")
        print("| ---: | " + " | ".join("---:" for _ in header) + " |")
        for nbytes in sorted(sizes):
            cells = []
            for n in rank_counts:
                bws = []
                for impl in ("ringmaster", "openmpi"):
                    us = colls.get((op, n, impl), {}).get(nbytes)
                    bws.append(None if us is None else nbytes * BUS_FACTOR[op](n) / (us * 1e-6) / 1e9)
                cells += ["" if bw is None else f"{bw:.2f}" for bw in bws]
                cells.append(f"{bws[0] / bws[1]:.2f}x" if bws[0] and bws[1] else "")
            print(f"| {size_label(nbytes)} | " + " | ".join(cells) + " |")


def main(path):
    sweeps = defaultdict(dict)  # impl -> bytes -> median us
    fusion = {}
    colls = defaultdict(dict)  # (op, ranks, impl) -> bytes -> lowest median us
    for line in open(path):
        parts = line.split()
        if parts and parts[0] == "coll":
            key = (parts[1], int(parts[2]), parts[3])
            nbytes, median = int(parts[4]), float(parts[6])
            colls[key][nbytes] = min(median, colls[key].get(nbytes, median))
        elif parts and parts[0] == "sweep":
            sweeps[parts[1]][int(parts[2])] = float(parts[4])
        elif parts and parts[0] == "fusion":
            fusion[parts[1]] = (int(parts[2]), int(parts[3]), float(parts[4]), float(parts[5]))
    columns = [(k, title) for k, title in COLUMNS if k in sweeps]
    sizes = sorted({b for v in sweeps.values() for b in v})
    if not sizes:
        collective_tables(colls)
        return

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
    collective_tables(colls)


if __name__ == "__main__":
    main(sys.argv[1])
