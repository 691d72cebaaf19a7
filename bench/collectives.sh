#!/usr/bin/env bash
# Allreduce bus bandwidth of 2 ranks on this host, 4 KiB to 256 MiB, for the
# runtime and its peers measured in this same run, then tensor fusion; prints
# markdown tables (docs/benchmarks.md has them with the machine):
#
#   bench/collectives.sh [BUILD_DIR]        # default build/; about 3 minutes
#
# Peers: torch.distributed's gloo backend (Debian python3-torch), Gloo's own
# API, OpenMPI's MPI_Allreduce over shared memory and over TCP (Debian
# openmpi-bin), and the limits: loopback TCP (both ranks sending the buffer at
# once) and one memcpy of it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
bin=$build/bin
cmake --build "$build" --target allreduce_sweep >&2
# OpenMPI's peer exists when MPI was found at configure time.
if ninja -C "$build" -t query mpi_allreduce >/dev/null 2>&1; then
  cmake --build "$build" --target mpi_allreduce >&2
fi
out=$(mktemp /tmp/ring-collectives-XXXXXX)
trap 'rm -f "$out"' EXIT

for impl in ringmaster ringmaster-gloo gloo tcp memcpy; do
  echo "collectives: $impl" >&2
  "$bin/allreduce_sweep" --impl "$impl" >>"$out"
done
echo "collectives: torch-gloo" >&2
/usr/bin/python3 "$root/bench/torch_allreduce.py" >>"$out"
if [ -x "$bin/mpi_allreduce" ]; then
  mpi=(mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2)
  echo "collectives: openmpi" >&2
  "${mpi[@]}" "$bin/mpi_allreduce" --label openmpi >>"$out"
  echo "collectives: openmpi-tcp" >&2
  "${mpi[@]}" --mca btl tcp,self --mca btl_tcp_if_include lo "$bin/mpi_allreduce" --label openmpi-tcp >>"$out"
else
  echo "collectives: $bin/mpi_allreduce was not built (Debian: libopenmpi-dev); no OpenMPI column" >&2
fi
for impl in ringmaster ringmaster-gloo; do
  echo "collectives: fusion, $impl" >&2
  "$bin/allreduce_sweep" --fusion --impl "$impl" >>"$out"
done

echo "$(nproc) processors: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo
/usr/bin/python3 "$root/bench/collectives_table.py" "$out"
