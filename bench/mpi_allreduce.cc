// mpi_allreduce: OpenMPI's MPI_Allreduce (sum of float32, in place) over the
// sizes allreduce_sweep uses, printing the same `sweep` lines, as the HPC
// peer in bench/collectives.sh:
//
//   mpirun -np 2 mpi_allreduce [--min-bytes 4096] [--max-bytes 268435456] [--label openmpi]
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

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  size_t min_bytes = 4096, max_bytes = size_t{256} << 20;
  std::string label = "openmpi";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--min-bytes") min_bytes = std::strtoull(argv[i + 1], nullptr, 10);
    if (flag == "--max-bytes") max_bytes = std::strtoull(argv[i + 1], nullptr, 10);
    if (flag == "--label") label = argv[i + 1];
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
