// mpi_allreduce: OpenMPI's MPI_Allreduce (sum of float32, in place) over the
// sizes allreduce_sweep uses, printing the same `sweep` lines, as the HPC
// peer in bench/collectives.sh:
//
//   mpirun -np 2 mpi_allreduce [--min-bytes 4096] [--max-bytes 268435456] [--label openmpi]
//   mpirun -np R mpi_allreduce --op allreduce|allgather|reduce-scatter|broadcast [--min-bytes ...]
//
// With --op it times that collective (MPI_Allreduce, MPI_Allgather,
// MPI_Reduce_scatter_block, MPI_Bcast from the last rank) the way allreduce_sweep
// --op times the runtime's, BYTES being the larger buffer, and prints
// `coll OP RANKS LABEL BYTES ITERATIONS MEDIAN_US MIN_US`.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

int Iterations(size_t bytes) {
  return static_cast<int>(std::clamp<size_t>((size_t{256} << 20) / bytes, 5, 200));
}

// One collective over every size; returns 1 on every rank if any result was wrong.
int CollectiveSweep(const std::string& op, const std::string& label, int rank, int world, size_t min_bytes,
                    size_t max_bytes) {
  const auto n = static_cast<size_t>(world);
  const auto sum = static_cast<float>(world * (world + 1) / 2);
  int failed = 0;
  for (size_t bytes = min_bytes; bytes <= max_bytes; bytes *= 4) {
    const size_t total = bytes / sizeof(float);
    const size_t block = total / n;
    std::vector<float> big(total), small(block);
    const int iters = Iterations(bytes);
    std::vector<double> us;
    for (int i = 0; i < iters + 2; ++i) {  // two warm-ups
      std::fill(big.begin(), big.end(), static_cast<float>(rank + 1));
      std::fill(small.begin(), small.end(), static_cast<float>(rank + 1));
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      bool ok = true;
      if (op == "allreduce") {
        MPI_Allreduce(MPI_IN_PLACE, big.data(), static_cast<int>(total), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        ok = big.front() == sum && big.back() == sum;
      } else if (op == "allgather") {
        MPI_Allgather(small.data(), static_cast<int>(block), MPI_FLOAT, big.data(), static_cast<int>(block),
                      MPI_FLOAT, MPI_COMM_WORLD);
        ok = big.front() == 1.0f && big.back() == static_cast<float>(world);
      } else if (op == "reduce-scatter") {
        MPI_Reduce_scatter_block(big.data(), small.data(), static_cast<int>(block), MPI_FLOAT, MPI_SUM,
                                 MPI_COMM_WORLD);
        ok = small.front() == sum && small.back() == sum;
      } else {
        MPI_Bcast(big.data(), static_cast<int>(total), MPI_FLOAT, world - 1, MPI_COMM_WORLD);
        ok = big.front() == static_cast<float>(world) && big.back() == static_cast<float>(world);
      }
      if (i >= 2) us.push_back((MPI_Wtime() - t0) * 1e6);
      failed |= !ok;
    }
    std::sort(us.begin(), us.end());
    if (rank == 0)
      std::printf("coll %s %d %s %zu %d %.1f %.1f\n", op.c_str(), world, label.c_str(), bytes, iters,
                  us[us.size() / 2], us[0]);
    std::fflush(stdout);
  }
  int any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0 && any_failed) std::fprintf(stderr, "mpi_allreduce: wrong %s results\n", op.c_str());
  return any_failed;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  size_t min_bytes = 4096, max_bytes = size_t{256} << 20;
  std::string label = "openmpi";
  std::string op;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--min-bytes") min_bytes = std::strtoull(argv[i + 1], nullptr, 10);
    if (flag == "--max-bytes") max_bytes = std::strtoull(argv[i + 1], nullptr, 10);
    if (flag == "--label") label = argv[i + 1];
    if (flag == "--op") op = argv[i + 1];
  }
  if (!op.empty()) {
    const int failed = CollectiveSweep(op, label, rank, world, min_bytes, max_bytes);
    MPI_Finalize();
    return failed;
  }
  const float want = static_cast<float>(world * (world + 1) / 2);
  int failed = 0;
  for (size_t bytes = min_bytes; bytes <= max_bytes; bytes *= 4) {
    const size_t count = bytes / sizeof(float);
    std::vector<float> data(count);
    const int iters = Iterations(bytes);
    std::vector<double> us;
    for (int i = 0; i < iters + 2; ++i) {  // two warm-ups
      std::fill(data.begin(), data.end(), static_cast<float>(rank + 1));
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      MPI_Allreduce(MPI_IN_PLACE, data.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      if (i >= 2) us.push_back((MPI_Wtime() - t0) * 1e6);
      failed |= data.front() != want || data.back() != want;
    }
    std::sort(us.begin(), us.end());
    if (rank == 0)
      std::printf("sweep %s %zu %d %.1f %.1f\n", label.c_str(), bytes, iters, us[us.size() / 2], us[0]);
    std::fflush(stdout);
  }
  int any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0 && any_failed) std::fprintf(stderr, "mpi_allreduce: wrong sums\n");
  MPI_Finalize();
  return any_failed ? 1 : 0;
}
