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
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "rank_processes.h"
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
// Returns its median and minimum (ms); throws when a sum is wrong.
std::vector<double> RunRank(const Config& config, int r, int world, size_t count, int iters,
                            const std::string& dir) {
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
  if (!std::all_of(data.begin(), data.end(), [&](float v) { return v == want; }))
    throw std::runtime_error("wrong sums");
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms.front()};
}

Figures Measure(const Config& config, int world, size_t count, int iters) {
  auto figures = ring::bench::RunRanks(
      world, [&](int r, const std::string& dir) { return RunRank(config, r, world, count, iters, dir); },
      300s);
  if (!figures || figures->size() != 2) return {};
  return {(*figures)[0], (*figures)[1], true};
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
