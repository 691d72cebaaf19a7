// cross_core_copy: what it costs one core to take bytes another core has
// just written, the two ways a shared-memory collective can move them:
//
//  - memcpy out of a shared mapping (what the runtime's shared-memory path
//    does with the slots of its segment), and
//  - process_vm_readv out of the other process's private buffer, in 64 KiB
//    pieces (single-copy CMA, what OpenMPI's vader transport does above
//    4 KiB).
//
// A writer process on core 0 rewrites its buffer before each round (its
// lines are then modified in core 0's cache, as a peer's freshly written
// gradients are), a reader on core 1 takes all of it. Median of 30 rounds
// each, alternating, for 256 KiB to 16 MiB; the last column is CMA's time
// over memcpy's.
//
//   ./build/bin/cross_core_copy        # about a second
#include <sched.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kRounds = 30;
constexpr size_t kPiece = size_t{64} << 10;

void Pin(int core) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(core, &set);
  sched_setaffinity(0, sizeof set, &set);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void* Shared(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    std::perror("mmap");
    std::exit(1);
  }
  return p;
}

// Returns false if process_vm_readv is refused (Yama, a container's policy).
bool Measure(size_t bytes) {
  // Round r: the writer sets turn = 2r + 1 once its buffer is written, the
  // reader sets done = r + 1 once it has taken it.
  auto* turn = static_cast<std::atomic<int>*>(Shared(4096));
  auto* done = turn + 1;
  turn->store(0);
  done->store(0);
  auto* shared = static_cast<char*>(Shared(bytes));
  auto* own = static_cast<char*>(std::aligned_alloc(4096, bytes));
  std::memset(own, 1, bytes);
  std::memset(shared, 1, bytes);
  const pid_t writer = getpid();
  std::fflush(stdout);  // the reader prints; nothing buffered may be printed twice
  const pid_t reader = fork();
  if (reader == 0) {
    Pin(1);
    auto* into = static_cast<char*>(std::aligned_alloc(4096, bytes));
    std::memset(into, 0, bytes);
    std::vector<double> cma, copy;
    for (int round = 0; round < 2 * kRounds; ++round) {
      while (turn->load(std::memory_order_acquire) != 2 * round + 1) {
      }
      const auto start = Clock::now();
      if (round % 2 == 0) {
        for (size_t at = 0; at < bytes; at += kPiece) {
          const size_t n = std::min(kPiece, bytes - at);
          iovec local{into + at, n}, remote{own + at, n};
          if (process_vm_readv(writer, &local, 1, &remote, 1, 0) != static_cast<ssize_t>(n)) _exit(2);
        }
        cma.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
      } else {
        std::memcpy(into, shared, bytes);
        copy.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
      }
      done->store(round + 1, std::memory_order_release);
    }
    const double c = Median(cma), m = Median(copy);
    std::printf("| %zu KiB | %.1f | %.2f | %.1f | %.2f | %.2fx |\n", bytes >> 10, m, bytes / m / 1e3, c,
                bytes / c / 1e3, c / m);
    std::fflush(stdout);
    _exit(0);
  }
  Pin(0);
  int status = 0;
  bool reaped = false;
  for (int round = 0; round < 2 * kRounds && !reaped; ++round) {
    std::memset(round % 2 == 0 ? own : shared, round & 0xff, bytes);
    turn->store(2 * round + 1, std::memory_order_release);
    while (done->load(std::memory_order_acquire) != round + 1) {
      if (waitpid(reader, &status, WNOHANG) == reader) {  // it gave up, or ended just now
        reaped = true;
        if (done->load(std::memory_order_acquire) != round + 1 || round + 1 != 2 * kRounds) return false;
        break;
      }
    }
  }
  if (!reaped) waitpid(reader, &status, 0);
  std::free(own);
  munmap(shared, bytes);
  munmap(turn, 4096);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

int main() {
  std::printf("| size | memcpy from shared memory us | GB/s | process_vm_readv us | GB/s | CMA / memcpy |\n");
  std::printf("| ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (size_t kib : {256, 1024, 4096, 16384}) {
    if (!Measure(kib << 10)) {
      std::fprintf(stderr, "cross_core_copy: process_vm_readv was refused (ptrace permission)\n");
      return 1;
    }
  }
  return 0;
}
