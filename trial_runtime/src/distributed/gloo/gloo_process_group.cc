// The "gloo" backend: Gloo's ring collectives over TCP between every rank,
// on CPU buffers. Connecting binds a TCP device to this rank's address and
// connects a pair to every other rank through the group's store
// (ConnectGlooMesh, which does not let a stray connection take a pair). Only
// Gloo's options-based API is used (gloo::allreduce with AllreduceOptions
// etc.); every call carries its own timeout and the next tag, which every
// rank computes alike since they call the same collectives in order. Gloo's
// exceptions become CollectiveError, after which the group refuses work.
//
// Two ranks and a small buffer: Gloo's ring takes two steps (reduce-scatter,
// then allgather), each a message and a wake-up of the other side; there the
// ranks swap whole buffers in one step instead and each adds the other's.
// Bytes on the wire are the same (a 2-rank ring sends half twice), and with
// two operands the sum is the same on both ranks bit for bit (a + b == b + a).
// Larger buffers keep the ring, which reduces chunk by chunk while the next
// chunk is in flight.
//
// reduce_scatter is an all-to-all (block r of every rank to rank r: the
// bytes of a ring's reduce-scatter) and a fold of the blocks in rank order,
// so its result does not depend on the count, unlike the ring's.
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/context.h>
#include <gloo/math.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/types.h>

#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "distributed/backend.h"
#include "distributed/collective_args.h"
#include "distributed/gloo/gloo_mesh.h"
#include "distributed/gloo/gloo_message.h"
#include "distributed/shm/shm_reduce.h"
#include "distributed/store_keys.h"
#include "ring/trial/errors.h"

namespace ring::trial::detail {
namespace {

using ReduceFn = void (*)(void*, const void*, const void*, size_t);

// Up to this size an allreduce of two ranks swaps buffers (one step).
constexpr size_t kPairExchangeMaxBytes = size_t{128} << 10;
// Gloo's collectives use slot prefixes 0x01-0x08; the swap has its own.
constexpr uint8_t kPairExchangeSlotPrefix = 0x52;

template <typename T>
ReduceFn ReduceFunction(ReduceOp op) {
  switch (op) {
    case ReduceOp::kMin:
      return static_cast<ReduceFn>(&gloo::min<T>);
    case ReduceOp::kMax:
      return static_cast<ReduceFn>(&gloo::max<T>);
    case ReduceOp::kSum:
    case ReduceOp::kAverage:
      break;
  }
  return static_cast<ReduceFn>(&gloo::sum<T>);
}

// Calls fn(T{}) with the C++ type of `type`.
template <typename Fn>
void WithType(DataType type, Fn&& fn) {
  switch (type) {
    case DataType::kFloat32:
      return fn(float{});
    case DataType::kFloat64:
      return fn(double{});
    case DataType::kInt32:
      return fn(int32_t{});
    case DataType::kInt64:
      return fn(int64_t{});
  }
}

class GlooProcessGroup final : public ProcessGroup {
 public:
  GlooProcessGroup(std::string name, std::shared_ptr<gloo::Context> context)
      : name_(std::move(name)), context_(std::move(context)) {}

  int rank() const override { return context_->rank; }
  int size() const override { return context_->size; }
  std::string backend() const override { return "gloo"; }
  bool allreduce_order_fixed() const override { return size() <= 2; }

  void allreduce(void* data, size_t count, DataType type, ReduceOp op, Timeout timeout) override {
    CheckTimeout(timeout, "allreduce");
    CheckReduce(type, op);
    CheckBuffer(data, count, "allreduce");
    const std::string what = std::string("allreduce (") + ReduceOpName(op) + " of " + std::to_string(count) +
                             " " + DataTypeName(type) + ")";
    Run(what, timeout, [&] {
      if (count == 0) return;
      WithType(type, [&](auto zero) {
        using T = decltype(zero);
        T* values = static_cast<T*>(data);
        if (size() == 2 && count * sizeof(T) <= kPairExchangeMaxBytes) {
          PairExchange(values, count, ReduceFunction<T>(op), timeout);
        } else {
          gloo::AllreduceOptions opts(context_);
          opts.setOutput(values, count);
          opts.setReduceFunction(ReduceFunction<T>(op));
          opts.setTag(next_tag_++);
          opts.setTimeout(timeout);
          gloo::allreduce(opts);
        }
        if constexpr (std::is_floating_point_v<T>) {
          if (op == ReduceOp::kAverage) {
            const T n = static_cast<T>(size());
            for (size_t i = 0; i < count; ++i) values[i] /= n;
          }
        }
      });
    });
  }

  void broadcast(void* data, size_t count, DataType type, int root, Timeout timeout) override {
    CheckTimeout(timeout, "broadcast");
    SizeOf(type);
    CheckRoot(root, size());
    CheckBuffer(data, count, "broadcast");
    const std::string what = "broadcast (" + std::to_string(count) + " " + DataTypeName(type) +
                             " from rank " + std::to_string(root) + ")";
    Run(what, timeout, [&] {
      if (count == 0) return;
      WithType(type, [&](auto zero) {
        using T = decltype(zero);
        gloo::BroadcastOptions opts(context_);
        opts.setOutput(static_cast<T*>(data), count);
        opts.setRoot(root);
        opts.setTag(next_tag_++);
        opts.setTimeout(timeout);
        gloo::broadcast(opts);
      });
    });
  }

  void reduce_scatter(const void* in, void* out, size_t count, DataType type, ReduceOp op,
                      Timeout timeout) override {
    CheckTimeout(timeout, "reduce_scatter");
    CheckReduce(type, op);
    CheckBuffer(in, count, "reduce_scatter");
    CheckBuffer(out, count, "reduce_scatter");
    const std::string what = std::string("reduce_scatter (") + ReduceOpName(op) + " of " +
                             std::to_string(count) + " " + DataTypeName(type) + " per rank)";
    Run(what, timeout, [&] {
      if (count == 0) return;
      WithType(type, [&](auto zero) {
        using T = decltype(zero);
        const auto n = static_cast<size_t>(size());
        const size_t block = count * sizeof(T);
        if (scratch_.size() < block * n) scratch_.resize(block * n);
        T* blocks = reinterpret_cast<T*>(scratch_.data());  // rank k's block `rank()` at k * count
        gloo::AlltoallOptions opts(context_);
        opts.setInput(const_cast<T*>(static_cast<const T*>(in)), count * n);
        opts.setOutput(blocks, count * n);
        opts.setTag(next_tag_++);
        opts.setTimeout(timeout);
        gloo::alltoall(opts);
        std::vector<const void*> sources(n);
        for (size_t k = 0; k < n; ++k) sources[k] = blocks + k * count;
        void* const outs[] = {out};
        shm::ReduceOrdered(outs, sources, count, type, op);
        if constexpr (std::is_floating_point_v<T>) {
          if (op == ReduceOp::kAverage) shm::DivideInPlace(out, count, type, static_cast<double>(n));
        }
      });
    });
  }

  void allgather(const void* in, void* out, size_t count, DataType type, Timeout timeout) override {
    CheckTimeout(timeout, "allgather");
    SizeOf(type);
    CheckBuffer(in, count, "allgather");
    CheckBuffer(out, count, "allgather");
    const std::string what = "allgather (" + std::to_string(count) + " " + DataTypeName(type) + " per rank)";
    Run(what, timeout, [&] {
      if (count == 0) return;
      WithType(type, [&](auto zero) {
        using T = decltype(zero);
        T* all = static_cast<T*>(out);
        gloo::AllgatherOptions opts(context_);
        // In place when `in` already is this rank's part of `out`.
        if (static_cast<const T*>(in) != all + static_cast<size_t>(rank()) * count)
          opts.setInput(const_cast<T*>(static_cast<const T*>(in)), count);
        opts.setOutput(all, count * static_cast<size_t>(size()));
        opts.setTag(next_tag_++);
        opts.setTimeout(timeout);
        gloo::allgather(opts);
      });
    });
  }

  void barrier(Timeout timeout) override {
    CheckTimeout(timeout, "barrier");
    Run("barrier", timeout, [&] {
      gloo::BarrierOptions opts(context_);
      opts.setTag(next_tag_++);
      opts.setTimeout(timeout);
      gloo::barrier(opts);
    });
  }

 private:
  // Both ranks send their buffer and receive the other's, then reduce: one
  // step. `reduce` is Gloo's elementwise function (out, a, b, count).
  template <typename T>
  void PairExchange(T* values, size_t count, ReduceFn reduce, Timeout timeout) {
    const size_t bytes = count * sizeof(T);
    if (scratch_.size() < bytes) scratch_.resize(bytes);
    const int peer = 1 - rank();
    const uint64_t slot = gloo::Slot::build(kPairExchangeSlotPrefix, next_tag_++);
    auto in = context_->createUnboundBuffer(scratch_.data(), bytes);
    auto out = context_->createUnboundBuffer(values, bytes);
    in->recv(peer, slot);
    out->send(peer, slot);
    // Gloo throws when the timeout passes; false means aborted.
    if (!in->waitRecv(nullptr, timeout) || !out->waitSend(nullptr, timeout))
      throw std::runtime_error("the exchange with rank " + std::to_string(peer) + " was aborted");
    reduce(values, values, scratch_.data(), count);
  }

  template <typename Fn>
  void Run(const std::string& what, Timeout timeout, Fn&& fn) {
    if (!broken_.empty())
      throw CollectiveError(what + " on rank " + std::to_string(rank()) + ": process group " + name_ +
                            " (gloo) is unusable after an earlier failure: " + broken_);
    std::string reason;
    try {
      fn();
      return;
    } catch (const std::exception& e) {  // gloo::IoException, gloo::EnforceNotMet, gloo::Exception
      reason = GlooMessage(e.what());
    }
    broken_ = what + ": " + reason;
    throw CollectiveError(what + " failed on rank " + std::to_string(rank()) + " of " +
                          std::to_string(size()) + " in process group " + name_ + " (gloo, timeout " +
                          DescribeTimeout(timeout) + "): " + reason +
                          " (a peer stopped or called another collective, or the network broke)");
  }

  std::string name_;
  std::shared_ptr<gloo::Context> context_;
  uint32_t next_tag_ = 0;
  std::vector<char> scratch_;  // the peer's buffer in PairExchange, the blocks of reduce_scatter
  std::string broken_;         // why the group is unusable, once it is
};

// Gloo reads its own getaddrinfo() result even when the lookup failed, so
// the address is resolved here first.
void CheckResolves(const GroupPlan& plan) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* result = nullptr;
  const int rv = ::getaddrinfo(plan.self.address.c_str(), nullptr, &hints, &result);
  if (rv == 0) {
    ::freeaddrinfo(result);
    return;
  }
  throw ConfigError("rank " + std::to_string(plan.self.rank) + " of process group " + plan.name +
                    " cannot listen on address " + plan.self.address + ": " + ::gai_strerror(rv));
}

}  // namespace

std::unique_ptr<ProcessGroup> ConnectGloo(const GroupPlan& plan) {
  const RankInfo& self = plan.self;
  CheckResolves(plan);
  std::shared_ptr<gloo::transport::Device> device;
  try {
    device = gloo::transport::tcp::CreateDevice(gloo::transport::tcp::attr(self.address.c_str()));
  } catch (const std::exception& e) {
    throw ConfigError("rank " + std::to_string(self.rank) + " of process group " + plan.name +
                      " cannot listen on address " + self.address +
                      " (RING_AGENT_ADDR must be an address of this host): " + GlooMessage(e.what()));
  }
  try {
    return std::make_unique<GlooProcessGroup>(plan.name, ConnectGlooMesh(plan, device));
  } catch (const TrialError&) {
    throw;  // says what happened (RendezvousError, AllocationEndedError)
  } catch (const std::exception& e) {
    throw RendezvousError("rendezvous of group " + plan.name + ": rank " + std::to_string(self.rank) +
                          " at " + self.address + " could not connect to its peers over Gloo within " +
                          DescribeTimeout(plan.timeout) + ": " + GlooMessage(e.what()));
  }
}

}  // namespace ring::trial::detail
