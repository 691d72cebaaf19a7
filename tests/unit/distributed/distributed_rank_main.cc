// One rank of a test group as a process of its own: connects through a file
// store in --dir, then runs one scripted step.
//   distributed_rank_helper --dir D --rank R --world W [--mode allreduce|sleep|bench]
//                           [--count N] [--iters K] [--timeout-ms T] [--backend B]
// allreduce: sums N floats (rank + 1 + i % 5) and checks the result, prints "ok".
// sleep:     prints "connected" and sleeps (for a test to kill it).
// bench:     times K allreduces of N floats after 3 warm-ups, prints the median.
// Exit codes: 0 done, 2 a wrong result, 3 an error from the runtime, 4 bad usage.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "ring/trial/distributed.h"
#include "ring/trial/errors.h"
#include "ring/trial/kv_store.h"

namespace {

using namespace std::chrono_literals;
using ring::trial::ReduceOp;

int Allreduce(ring::trial::ProcessGroup& group, size_t count, std::chrono::milliseconds timeout) {
  std::vector<float> data(count);
  for (size_t i = 0; i < count; ++i) data[i] = static_cast<float>(group.rank() + 1 + static_cast<int>(i % 5));
  group.allreduce(std::span<float>(data), ReduceOp::kSum, timeout);
  const int n = group.size();
  for (size_t i = 0; i < count; ++i) {
    const float want = static_cast<float>(n * (n + 1) / 2 + n * static_cast<int>(i % 5));
    if (data[i] != want) {
      std::cout << "element " << i << " is " << data[i] << ", want " << want << std::endl;
      return 2;
    }
  }
  std::cout << "ok" << std::endl;
  return 0;
}

int Bench(ring::trial::ProcessGroup& group, size_t count, int iters, std::chrono::milliseconds timeout) {
  std::vector<float> data(count, 1.0f);
  std::vector<double> seconds;
  for (int i = 0; i < iters + 3; ++i) {
    group.barrier(timeout);
    const auto t0 = std::chrono::steady_clock::now();
    group.allreduce(std::span<float>(data), ReduceOp::kSum, timeout);
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - t0;
    if (i >= 3) seconds.push_back(took.count());
  }
  std::sort(seconds.begin(), seconds.end());
  const double median = seconds[seconds.size() / 2];
  const double bytes = static_cast<double>(count * sizeof(float));
  const int n = group.size();
  std::printf(
      "allreduce of %zu float32 (%.1f MiB) over %d ranks: median %.2f ms, min %.2f ms; "
      "algorithm bandwidth %.2f GB/s, bus bandwidth %.2f GB/s\n",
      count, bytes / (1 << 20), n, median * 1e3, seconds.front() * 1e3, bytes / median / 1e9,
      bytes * 2 * (n - 1) / n / median / 1e9);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> args = {{"--mode", "allreduce"},
                                             {"--count", "1000"},
                                             {"--iters", "20"},
                                             {"--timeout-ms", "60000"},
                                             {"--backend", "auto"}};
  for (int i = 1; i + 1 < argc; i += 2) args[argv[i]] = argv[i + 1];
  if (!args.count("--dir") || !args.count("--rank") || !args.count("--world")) {
    std::cerr << "usage: " << argv[0] << " --dir D --rank R --world W [--mode M] [--count N] [--iters K]\n";
    return 4;
  }
  try {
    ring::trial::RankInfo self;
    self.rank = std::stoi(args["--rank"]);
    self.world_size = std::stoi(args["--world"]);
    self.agent_id = "host-" + args["--rank"];  // one rank per pretend host
    const std::chrono::milliseconds timeout(std::stoll(args["--timeout-ms"]));
    ring::trial::ProcessGroupOptions options;
    options.rendezvous_timeout = 30s;
    options.backend = args["--backend"];
    auto group = ring::trial::ConnectProcessGroup(self, ring::trial::FileStore(args["--dir"]), options);
    const size_t count = std::stoull(args["--count"]);
    const std::string& mode = args["--mode"];
    if (mode == "allreduce") return Allreduce(*group, count, timeout);
    if (mode == "bench") return Bench(*group, count, std::stoi(args["--iters"]), timeout);
    if (mode == "sleep") {
      std::cout << "connected" << std::endl;
      std::this_thread::sleep_for(120s);
      return 0;
    }
    std::cerr << "unknown --mode " << mode << "\n";
    return 4;
  } catch (const ring::trial::TrialError& e) {
    std::cout << "error: " << e.what() << std::endl;
    return 3;
  }
}
