#!/usr/bin/env bash
# Allreduce bus bandwidth of 2 ranks on this host, 4 KiB to 256 MiB, for the
# runtime and its peers measured in this same run, then tensor fusion; prints
# markdown tables (docs/benchmarks.md has them with the machine):
#
#   bench/collectives.sh [BUILD_DIR]        # default build/; about 8 minutes on an idle machine
#
# Peers: torch.distributed's gloo backend (Debian python3-torch), Gloo's own
# API, OpenMPI's MPI_Allreduce over shared memory and over TCP (Debian
# openmpi-bin), and the limits: loopback TCP (both ranks sending the buffer at
# once) and one memcpy of it.
#
# Then allreduce, allgather, reduce-scatter and broadcast of the runtime's
# shared-memory path against OpenMPI's (MPI_Allreduce, MPI_Allgather,
# MPI_Reduce_scatter_block, MPI_Bcast) for 2 and 4 ranks, each pair run in
# turn COLLECTIVES_ROUNDS times (default 3); a table keeps, per size, the
# lowest median of the rounds for each side, so a burst of other work on the
# machine does not decide a row. 4 ranks on fewer than 4 processors are
# oversubscribed: OpenMPI then runs with --mca mpi_yield_when_idle 1 (the
# runtime yields by itself when its local ranks outnumber the processors).
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
trap 'rm -f "$out" "$out.torch"' EXIT

for impl in ringmaster ringmaster-gloo gloo tcp memcpy; do
  echo "collectives: $impl" >&2
  "$bin/allreduce_sweep" --impl "$impl" >>"$out"
done
# torch picks a free port and binds it again later; another program on the
# machine can take it in between, so a failed attempt is retried.
for attempt in 1 2 3; do
  echo "collectives: torch-gloo (attempt $attempt)" >&2
  if /usr/bin/python3 "$root/bench/torch_allreduce.py" >"$out.torch"; then
    cat "$out.torch" >>"$out"
    break
  fi
done
rm -f "$out.torch"
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

rounds=${COLLECTIVES_ROUNDS:-3}
for ranks in 2 4; do
  mpi=(mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$ranks")
  if [ "$ranks" -gt "$(nproc)" ]; then mpi+=(--mca mpi_yield_when_idle 1); fi
  for op in allreduce allgather reduce-scatter broadcast; do
    for round in $(seq "$rounds"); do
      echo "collectives: $op, $ranks ranks, round $round of $rounds" >&2
      "$bin/allreduce_sweep" --op "$op" --ranks "$ranks" >>"$out"
      if [ -x "$bin/mpi_allreduce" ]; then
        "${mpi[@]}" "$bin/mpi_allreduce" --op "$op" >>"$out"
      fi
    done
  done
done

echo "$(nproc) processors: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo
/usr/bin/python3 "$root/bench/collectives_table.py" "$out"
