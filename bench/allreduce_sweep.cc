// allreduce_sweep: allreduce (sum) of one float32 buffer, 4 KiB to 256 MiB,
// between ranks that are processes on this host, for one implementation per
// run, so bench/collectives.sh can set them side by side with peers that live
// in other programs (torch.distributed, OpenMPI).
//
//   allreduce_sweep --impl NAME [--ranks 2] [--min-bytes 4096] [--max-bytes 268435456]
//   allreduce_sweep --fusion --impl NAME [--ranks 2]
//   allreduce_sweep --op OP [--ranks 2] [--min-bytes 4096] [--max-bytes 268435456]
//
// NAME:
//   ringmaster       the runtime's process group as a trial gets it when its
//                    ranks share an agent (backend auto: shared memory inside
//                    the host, Gloo between hosts)
//   ringmaster-gloo  the runtime's process group with backend gloo (TCP)
//   gloo             Gloo's own API (tcp device, FileStore, gloo::allreduce),
//                    as torch.distributed's gloo backend drives it
//   tcp              the loopback limit: two ranks send each other the buffer
//                    over one TCP connection at once (a 2-rank ring moves
//                    that much per rank)
//   memcpy           the memory limit: one copy of the buffer
//
// --op runs one collective of the runtime's process group on ranks that share
// an agent (shared memory), OP one of allreduce, allgather, reduce-scatter,
// broadcast; BYTES is the larger buffer (allgather's output, reduce-scatter's
// input), as nccl-tests count it; broadcast is from the last rank, so rank 0,
// whose times are printed, is a receiver. It prints
// `coll OP RANKS ringmaster BYTES ITERATIONS MEDIAN_US MIN_US`, as
// mpi_allreduce --op does for OpenMPI.
//
// Prints one line per size: `sweep IMPL BYTES ITERATIONS MEDIAN_US MIN_US`,
// and with --fusion: `fusion IMPL TENSORS TENSOR_BYTES UNFUSED_US FUSED_US`
// (200 tensors of 100 KiB averaged one allreduce each, then through the
// GradientReducer's buckets). Every rank checks every result.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gloo/allreduce.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>

#include "rank_processes.h"
#include "ring/trial/distributed.h"
#include "ring/trial/gradient_reducer.h"
#include "ring/trial/kv_store.h"

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using ring::bench::RunRanks;

double Micros(Clock::duration d) {
  return std::chrono::duration<double, std::micro>(d).count();
}

// Fewer repetitions for larger buffers: about 256 MiB moved per size, at
// least 5 and at most 200 timed runs. Every rank computes the same count.
int Iterations(size_t bytes) {
  return static_cast<int>(std::clamp<size_t>((size_t{256} << 20) / bytes, 5, 200));
}

// One allreduce of `count` floats, in place.
using Allreduce = std::function<void(float* data, size_t count)>;
// A barrier between timed runs, so each starts with every rank ready.
using Barrier = std::function<void()>;

struct Timing {
  double median_us = 0;
  double min_us = 0;
};

Timing Time(int rank, int world, size_t count, int iters, const Allreduce& allreduce,
            const Barrier& barrier) {
  std::vector<float> data(count);
  std::vector<double> us;
  const float want = static_cast<float>(world * (world + 1) / 2);
  for (int i = 0; i < iters + 2; ++i) {  // two warm-ups
    std::fill(data.begin(), data.end(), static_cast<float>(rank + 1));
    barrier();
    const auto t0 = Clock::now();
    allreduce(data.data(), count);
    if (i >= 2) us.push_back(Micros(Clock::now() - t0));
    if (data.front() != want || data.back() != want || data[count / 2] != want)
      throw std::runtime_error("wrong sum at " + std::to_string(count) + " floats");
  }
  std::sort(us.begin(), us.end());
  return {us[us.size() / 2], us.front()};
}

ring::trial::RankInfo RankOf(int rank, int world, bool one_agent) {
  ring::trial::RankInfo self;
  self.rank = rank;
  self.world_size = world;
  self.local_rank = one_agent ? rank : 0;
  self.local_world_size = one_agent ? world : 1;
  self.agent_id = one_agent ? "agent-0" : "agent-" + std::to_string(rank);
  self.address = "127.0.0.1";
  return self;
}

std::unique_ptr<ring::trial::ProcessGroup> RingmasterGroup(const std::string& impl, int rank, int world,
                                                           const std::string& dir) {
  const bool shared = impl == "ringmaster";
  return ring::trial::ConnectProcessGroup(RankOf(rank, world, shared), ring::trial::FileStore(dir),
                                          {.backend = shared ? "auto" : "gloo", .rendezvous_timeout = 60s});
}

// Gloo's own API, the way torch.distributed's ProcessGroupGloo drives it.
struct PlainGloo {
  std::shared_ptr<gloo::rendezvous::Context> context;

  PlainGloo(int rank, int world, const std::string& dir) {
    gloo::transport::tcp::attr attr("127.0.0.1");
    std::shared_ptr<gloo::transport::Device> device = gloo::transport::tcp::CreateDevice(attr);
    gloo::rendezvous::FileStore store(dir);
    context = std::make_shared<gloo::rendezvous::Context>(rank, world);
    context->setTimeout(60s);
    context->connectFullMesh(store, device);
  }
  void allreduce(float* data, size_t count) {
    gloo::AllreduceOptions opts(context);
    opts.setOutput(data, count);
    opts.setReduceFunction(static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<float>));
    opts.setTimeout(60s);
    gloo::allreduce(opts);
  }
};

// Two ranks joined by one TCP connection over 127.0.0.1.
int ConnectPair(int rank, const std::string& dir) {
  const std::string port_file = dir + "/tcp.port";
  if (rank == 0) {
    const int listener = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(listener, 1) != 0 ||
        getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
      throw std::runtime_error("cannot listen on 127.0.0.1");
    std::ofstream(port_file + ".tmp") << ntohs(addr.sin_port);
    std::rename((port_file + ".tmp").c_str(), port_file.c_str());
    const int fd = accept(listener, nullptr, nullptr);
    close(listener);
    return fd;
  }
  int port = 0;
  for (int i = 0; i < 6000 && !(std::ifstream(port_file) >> port); ++i) std::this_thread::sleep_for(10ms);
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (port == 0 || connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    throw std::runtime_error("cannot connect to rank 0");
  return fd;
}

// The loopback limit: both ranks send their buffer and receive the other's at
// once, the data a 2-rank ring allreduce moves in each direction. The result
// is the sum, so Time() checks it like any other allreduce.
struct TcpPair {
  int fd;
  std::vector<float> peer;
  explicit TcpPair(int rank, const std::string& dir) : fd(ConnectPair(rank, dir)) {
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  ~TcpPair() { close(fd); }
  void allreduce(float* data, size_t count) {
    peer.resize(count);
    Exchange(reinterpret_cast<const char*>(data), reinterpret_cast<char*>(peer.data()),
             count * sizeof(float));
    for (size_t i = 0; i < count; ++i) data[i] += peer[i];
  }
  // Sends `out` and receives as many bytes into `in` at once, in one thread
  // (non-blocking socket, poll), so nothing but the transfer is timed.
  void Exchange(const char* out, char* in, size_t bytes) {
    size_t sent = 0, received = 0;
    while (sent < bytes || received < bytes) {
      pollfd pfd{fd, static_cast<short>((received < bytes ? POLLIN : 0) | (sent < bytes ? POLLOUT : 0)), 0};
      if (poll(&pfd, 1, 60000) <= 0) throw std::runtime_error("exchange timed out");
      if (received < bytes && (pfd.revents & POLLIN)) {
        const ssize_t k = recv(fd, in + received, bytes - received, MSG_DONTWAIT);
        if (k == 0 || (k < 0 && errno != EAGAIN)) throw std::runtime_error("recv failed");
        if (k > 0) received += static_cast<size_t>(k);
      }
      if (sent < bytes && (pfd.revents & POLLOUT)) {
        const ssize_t k = send(fd, out + sent, bytes - sent, MSG_DONTWAIT);
        if (k < 0 && errno != EAGAIN) throw std::runtime_error("send failed");
        if (k > 0) sent += static_cast<size_t>(k);
      }
    }
  }
  void barrier() {
    char out = 0, in = 0;
    Exchange(&out, &in, 1);
  }
};

std::vector<double> SweepRank(const std::string& impl, int rank, int world, const std::string& dir,
                              size_t min_bytes, size_t max_bytes) {
  std::unique_ptr<ring::trial::ProcessGroup> group;
  std::unique_ptr<PlainGloo> gloo;
  std::unique_ptr<TcpPair> tcp;
  Allreduce allreduce;
  Barrier barrier;
  if (impl == "gloo") {
    gloo = std::make_unique<PlainGloo>(rank, world, dir);
    allreduce = [&](float* d, size_t n) { gloo->allreduce(d, n); };
    barrier = [&] {
      float token = 0;
      gloo->allreduce(&token, 1);
    };
  } else if (impl == "tcp") {
    if (world != 2) throw std::runtime_error("--impl tcp needs --ranks 2");
    tcp = std::make_unique<TcpPair>(rank, dir);
    allreduce = [&](float* d, size_t n) { tcp->allreduce(d, n); };
    barrier = [&] { tcp->barrier(); };
  } else {
    group = RingmasterGroup(impl, rank, world, dir);
    allreduce = [&](float* d, size_t n) {
      group->allreduce(d, n, ring::trial::DataType::kFloat32, ring::trial::ReduceOp::kSum, 60s);
    };
    barrier = [&] { group->barrier(60s); };
  }
  // Figures: bytes, iterations, median, min for every size.
  std::vector<double> figures;
  for (size_t bytes = min_bytes; bytes <= max_bytes; bytes *= 4) {
    const int iters = Iterations(bytes);
    const Timing t = Time(rank, world, bytes / sizeof(float), iters, allreduce, barrier);
    figures.insert(figures.end(),
                   {static_cast<double>(bytes), static_cast<double>(iters), t.median_us, t.min_us});
  }
  return figures;
}

// One collective (--op) of the runtime's group over shared memory, for every
// size; every rank checks every result. Figures as SweepRank's.
std::vector<double> CollectiveRank(const std::string& op, int rank, int world, const std::string& dir,
                                   size_t min_bytes, size_t max_bytes) {
  auto group = RingmasterGroup("ringmaster", rank, world, dir);
  const auto n = static_cast<size_t>(world);
  std::vector<double> figures;
  for (size_t bytes = min_bytes; bytes <= max_bytes; bytes *= 4) {
    const size_t total = bytes / sizeof(float);
    const size_t block = total / n;  // allgather's input, reduce-scatter's output
    std::vector<float> big(total), small(block);
    const int iters = Iterations(bytes);
    std::vector<double> us;
    for (int i = 0; i < iters + 2; ++i) {  // two warm-ups
      std::fill(big.begin(), big.end(), static_cast<float>(rank + 1));
      std::fill(small.begin(), small.end(), static_cast<float>(rank + 1));
      group->barrier(60s);
      const auto t0 = Clock::now();
      if (op == "allreduce")
        group->allreduce(big.data(), total, ring::trial::DataType::kFloat32, ring::trial::ReduceOp::kSum,
                         60s);
      else if (op == "allgather")
        group->allgather(small.data(), big.data(), block, ring::trial::DataType::kFloat32, 60s);
      else if (op == "reduce-scatter")
        group->reduce_scatter(big.data(), small.data(), block, ring::trial::DataType::kFloat32,
                              ring::trial::ReduceOp::kSum, 60s);
      else  // from the last rank: rank 0, which reports, waits for the data
        group->broadcast(big.data(), total, ring::trial::DataType::kFloat32, world - 1, 60s);
      if (i >= 2) us.push_back(Micros(Clock::now() - t0));
      const auto sum = static_cast<float>(world * (world + 1) / 2);
      const bool ok = op == "allreduce"   ? big.front() == sum && big.back() == sum
                      : op == "allgather" ? big.front() == 1.0f && big.back() == static_cast<float>(world)
                      : op == "reduce-scatter" ? small.front() == sum && small.back() == sum
                                               : big.front() == static_cast<float>(world) &&
                                                     big.back() == static_cast<float>(world);
      if (!ok) throw std::runtime_error("wrong " + op + " result at " + std::to_string(bytes) + " bytes");
    }
    std::sort(us.begin(), us.end());
    figures.insert(figures.end(),
                   {static_cast<double>(bytes), static_cast<double>(iters), us[us.size() / 2], us.front()});
  }
  return figures;
}

// The memory limit, in this process: one copy of the buffer.
std::vector<double> MemcpySweep(size_t min_bytes, size_t max_bytes) {
  std::vector<double> figures;
  for (size_t bytes = min_bytes; bytes <= max_bytes; bytes *= 4) {
    std::vector<char> from(bytes, 1), to(bytes, 0);
    const int iters = Iterations(bytes);
    std::vector<double> us;
    for (int i = 0; i < iters + 2; ++i) {
      const auto t0 = Clock::now();
      std::memcpy(to.data(), from.data(), bytes);
      if (i >= 2) us.push_back(Micros(Clock::now() - t0));
      from[i % bytes] = static_cast<char>(i);  // the next copy is not the same as this one
    }
    std::sort(us.begin(), us.end());
    figures.insert(figures.end(),
                   {static_cast<double>(bytes), static_cast<double>(iters), us[us.size() / 2], us[0]});
  }
  return figures;
}

// 200 tensors of 100 KiB: one allreduce (average) each, then the reducer's
// buckets (25 MiB, as DDP's default). Figures: unfused and fused medians.
std::vector<double> FusionRank(const std::string& impl, int rank, int world, const std::string& dir,
                               int tensors, size_t tensor_bytes) {
  auto group = RingmasterGroup(impl, rank, world, dir);
  const size_t count = tensor_bytes / sizeof(float);
  std::vector<std::vector<float>> grads(tensors, std::vector<float>(count));
  std::vector<std::span<float>> spans;
  for (auto& g : grads) spans.emplace_back(g);
  ring::trial::GradientReducer reducer(*group, spans);
  auto reset = [&] {
    for (auto& g : grads) std::fill(g.begin(), g.end(), static_cast<float>(rank + 1));
  };
  auto check = [&] {
    const float want = static_cast<float>(world + 1) / 2;
    for (const auto& g : grads)
      if (g.front() != want || g.back() != want) throw std::runtime_error("wrong average");
  };
  std::vector<double> unfused, fused;
  for (int i = 0; i < 12; ++i) {
    reset();
    group->barrier(60s);
    auto t0 = Clock::now();
    for (auto& g : grads)
      group->allreduce(g.data(), count, ring::trial::DataType::kFloat32, ring::trial::ReduceOp::kAverage,
                       60s);
    if (i >= 2) unfused.push_back(Micros(Clock::now() - t0));
    check();

    reset();
    group->barrier(60s);
    t0 = Clock::now();
    for (int k = tensors - 1; k >= 0; --k) reducer.mark_ready(static_cast<size_t>(k));  // backward order
    reducer.wait();
    if (i >= 2) fused.push_back(Micros(Clock::now() - t0));
    check();
  }
  std::sort(unfused.begin(), unfused.end());
  std::sort(fused.begin(), fused.end());
  return {unfused[unfused.size() / 2], fused[fused.size() / 2]};
}

int Usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s --impl ringmaster|ringmaster-gloo|gloo|tcp|memcpy [--ranks R] [--min-bytes B] "
               "[--max-bytes B]\n       %s --fusion --impl ringmaster|ringmaster-gloo [--ranks R]\n"
               "       %s --op allreduce|allgather|reduce-scatter|broadcast [--ranks R] [--min-bytes B] "
               "[--max-bytes B]\n",
               argv0, argv0, argv0);
  return 4;
}

}  // namespace

int main(int argc, char** argv) {
  std::string impl;
  int world = 2;
  size_t min_bytes = 4096, max_bytes = size_t{256} << 20;
  bool fusion = false;
  std::string op;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    const bool has_value = i + 1 < argc;
    if (flag == "--fusion")
      fusion = true;
    else if (flag == "--op" && has_value)
      op = argv[++i];
    else if (flag == "--impl" && has_value)
      impl = argv[++i];
    else if (flag == "--ranks" && has_value)
      world = std::atoi(argv[++i]);
    else if (flag == "--min-bytes" && has_value)
      min_bytes = std::strtoull(argv[++i], nullptr, 10);
    else if (flag == "--max-bytes" && has_value)
      max_bytes = std::strtoull(argv[++i], nullptr, 10);
    else
      return Usage(argv[0]);
  }
  if (!op.empty()) {
    const std::vector<std::string> ops = {"allreduce", "allgather", "reduce-scatter", "broadcast"};
    if (std::find(ops.begin(), ops.end(), op) == ops.end() || world < 2 || min_bytes % (4 * world) != 0 ||
        max_bytes < min_bytes)
      return Usage(argv[0]);
    auto figures = RunRanks(world, [&](int rank, const std::string& dir) {
      return CollectiveRank(op, rank, world, dir, min_bytes, max_bytes);
    });
    if (!figures) return 1;
    for (size_t i = 0; i + 3 < figures->size(); i += 4)
      std::printf("coll %s %d ringmaster %.0f %.0f %.1f %.1f\n", op.c_str(), world, (*figures)[i],
                  (*figures)[i + 1], (*figures)[i + 2], (*figures)[i + 3]);
    return 0;
  }
  const std::vector<std::string> known = {"ringmaster", "ringmaster-gloo", "gloo", "tcp", "memcpy"};
  if (std::find(known.begin(), known.end(), impl) == known.end() || world < 2 || min_bytes < sizeof(float) ||
      min_bytes % sizeof(float) != 0 || max_bytes < min_bytes || (fusion && impl.rfind("ringmaster", 0) != 0))
    return Usage(argv[0]);

  if (fusion) {
    constexpr int kTensors = 200;
    constexpr size_t kTensorBytes = 100 * 1024;
    auto figures = RunRanks(world, [&](int rank, const std::string& dir) {
      return FusionRank(impl, rank, world, dir, kTensors, kTensorBytes);
    });
    if (!figures) return 1;
    std::printf("fusion %s %d %zu %.1f %.1f\n", impl.c_str(), kTensors, kTensorBytes, (*figures)[0],
                (*figures)[1]);
    return 0;
  }
  std::optional<std::vector<double>> figures;
  if (impl == "memcpy")
    figures = MemcpySweep(min_bytes, max_bytes);
  else
    figures = RunRanks(world, [&](int rank, const std::string& dir) {
      return SweepRank(impl, rank, world, dir, min_bytes, max_bytes);
    });
  if (!figures) return 1;
  for (size_t i = 0; i + 3 < figures->size(); i += 4)
    std::printf("sweep %s %.0f %.0f %.1f %.1f\n", impl.c_str(), (*figures)[i], (*figures)[i + 1],
                (*figures)[i + 2], (*figures)[i + 3]);
  return 0;
}
