"""Times DistributedContext's transport: N ranks as local processes, the hub
found through a file store, allgather of a small int.

    PYTHONPATH=build/python /usr/bin/python3 trial_runtime/python/tests/collectives_bench.py [RANKS] [ROUNDS]
"""

import statistics
import subprocess
import sys
import tempfile
import time

WORKER = """
import sys, time, ringtrial
from determined.core import _star
rank, size, rounds, directory = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
star = _star.Star(ringtrial.file_store(directory), "bench", rank, size, "127.0.0.1", "127.0.0.1", 60.0)
for _ in range(20):
    star.broadcast(star.gather(rank))
times = []
for i in range(rounds):
    t = time.perf_counter()
    assert star.broadcast(star.gather(rank)) == list(range(size))
    times.append(time.perf_counter() - t)
if rank == 0:
    print(" ".join(f"{x:.6f}" for x in times))
"""


def main() -> None:
    size = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    with tempfile.TemporaryDirectory() as directory:
        procs = [subprocess.Popen([sys.executable, "-c", WORKER, str(r), str(size), str(rounds), directory],
                                  stdout=subprocess.PIPE, text=True) for r in range(size)]
        out = [p.communicate()[0] for p in procs]
    times = [float(x) for x in out[0].split()]
    print(f"{size} ranks, allgather of an int: median {statistics.median(times) * 1e3:.3f} ms, "
          f"p90 {sorted(times)[int(len(times) * 0.9)] * 1e3:.3f} ms over {rounds} rounds")


if __name__ == "__main__":
    main()
