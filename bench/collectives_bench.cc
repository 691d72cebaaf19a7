// collectives_bench: allreduce of one float32 buffer between ranks that are
// processes on this host, over the gloo backend (the peer) and over the
// hierarchical backend with the ranks split into agents in several ways.
// Every configuration forks its ranks, which rendezvous through a file store
// in a temporary directory and connect over 127.0.0.1; rank 0 reports the
// median time of the timed allreduces (after warm-ups, each preceded by a
// barrier), and every rank checks the sums.
//
//   collectives_bench [--count N] [--ranks R] [--iters K]
//   defaults: 4194304 floats (16 MiB), 4 ranks, 10 timed iterations
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "ring/trial/distributed.h"
#include "ring/trial/errors.h"
#include "ring/trial/kv_store.h"

#ifndef RING_BUILD_TYPE
#define RING_BUILD_TYPE "unknown"
#endif

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

struct Config {
  std::string label;
  std::string backend;
  int agents;  // ranks are split evenly, in order, between this many agents
};

struct Figures {
  double median_ms = 0;
  double min_ms = 0;
  bool ok = false;
};

ring::trial::RankInfo RankOf(int r, int world, int agents) {
  const int per_agent = world / agents;
  ring::trial::RankInfo self;
  self.rank = r;
  self.world_size = world;
  self.local_rank = r % per_agent;
  self.local_world_size = per_agent;
  self.agent_id = "agent-" + std::to_string(r / per_agent);
  self.address = "127.0.0.1";
  return self;
}

// One rank: connect, warm up, time `iters` allreduces, check the sums.
// Writes the figures of rank 0 to `fd`.
int RunRank(const Config& config, int r, int world, size_t count, int iters, const std::string& dir, int fd) {
  auto group = ring::trial::ConnectProcessGroup(RankOf(r, world, config.agents), ring::trial::FileStore(dir),
                                                {.backend = config.backend, .rendezvous_timeout = 60s});
  std::vector<float> data(count);
  std::vector<double> ms;
  for (int i = 0; i < iters + 3; ++i) {
    std::fill(data.begin(), data.end(), static_cast<float>(r + 1));
    group->barrier(60s);
    const auto t0 = Clock::now();
    group->allreduce(std::span<float>(data), ring::trial::ReduceOp::kSum, 60s);
    const std::chrono::duration<double, std::milli> took = Clock::now() - t0;
    if (i >= 3) ms.push_back(took.count());
  }
  const float want = static_cast<float>(world * (world + 1) / 2);
  Figures figures;
  figures.ok = std::all_of(data.begin(), data.end(), [&](float v) { return v == want; });
  std::sort(ms.begin(), ms.end());
  figures.median_ms = ms[ms.size() / 2];
  figures.min_ms = ms.front();
  if (r == 0) (void)!write(fd, &figures, sizeof figures);
  return figures.ok ? 0 : 2;
}

Figures Measure(const Config& config, int world, size_t count, int iters) {
  char dir_template[] = "/tmp/ring-collectives-bench-XXXXXX";
  const std::string dir = mkdtemp(dir_template);
  int fds[2];
  if (pipe(fds) != 0) {
    std::perror("pipe");
    std::exit(1);
  }
  std::vector<pid_t> pids;
  for (int r = 0; r < world; ++r) {
    const pid_t pid = fork();
    if (pid == 0) {
      close(fds[0]);
      int code = 3;
      try {
        code = RunRank(config, r, world, count, iters, dir, fds[1]);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "%s, rank %d: %s\n", config.label.c_str(), r, e.what());
      }
      _exit(code);
    }
    pids.push_back(pid);
  }
  close(fds[1]);
  bool ok = true;
  const auto deadline = Clock::now() + 300s;
  for (pid_t pid : pids) {
    int status = 0;
    while (waitpid(pid, &status, WNOHANG) == 0) {
      if (Clock::now() > deadline) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        break;
      }
      std::this_thread::sleep_for(10ms);
    }
    ok = ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  Figures figures;
  if (read(fds[0], &figures, sizeof figures) != sizeof figures) figures.ok = false;
  figures.ok = figures.ok && ok;
  close(fds[0]);
  std::filesystem::remove_all(dir);
  return figures;
}

}  // namespace

int main(int argc, char** argv) {
  size_t count = size_t{1} << 22;
  int world = 4;
  int iters = 10;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--count")
      count = std::strtoull(argv[i + 1], nullptr, 10);
    else if (flag == "--ranks")
      world = std::atoi(argv[i + 1]);
    else if (flag == "--iters")
      iters = std::atoi(argv[i + 1]);
  }
  if (argc % 2 == 0 || count == 0 || world < 2 || world % 2 != 0 || iters < 1) {
    std::fprintf(stderr, "usage: %s [--count N] [--ranks R (even, >= 2)] [--iters K]\n", argv[0]);
    return 4;
  }
  const std::vector<Config> configs{
      {"gloo (peer)", "gloo", world},
      {"hierarchical, 1 agent x " + std::to_string(world), "hierarchical", 1},
      {"hierarchical, 2 agents x " + std::to_string(world / 2), "hierarchical", 2},
  };
  const double mib = static_cast<double>(count * sizeof(float)) / (1 << 20);
  std::printf("allreduce (sum) of %zu float32 (%.0f MiB), %d ranks as processes on this host, 127.0.0.1\n",
              count, mib, world);
  std::printf("%u processors; build type %s; median of %d after 3 warm-ups\n\n",
              std::thread::hardware_concurrency(), RING_BUILD_TYPE, iters);
  std::printf("| backend | median ms | min ms | bus bandwidth GB/s | time / gloo's |\n");
  std::printf("| --- | ---: | ---: | ---: | ---: |\n");
  double peer_ms = 0;
  bool all_ok = true;
  for (const Config& config : configs) {
    const Figures f = Measure(config, world, count, iters);
    all_ok = all_ok && f.ok;
    if (!f.ok) {
      std::printf("| %s | failed | | | |\n", config.label.c_str());
      continue;
    }
    if (peer_ms == 0) peer_ms = f.median_ms;
    const double bus =
        static_cast<double>(count * sizeof(float)) * 2 * (world - 1) / world / (f.median_ms / 1e3) / 1e9;
    std::printf("| %s | %.1f | %.1f | %.2f | %.2f |\n", config.label.c_str(), f.median_ms, f.min_ms, bus,
                f.median_ms / peer_ms);
    std::fflush(stdout);
  }
  return all_ok ? 0 : 1;
}
