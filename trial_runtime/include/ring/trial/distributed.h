#pragma once
// Collectives between the ranks of one trial. The platform sets up the ranks
// (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, RING_AGENT_ID,
// RING_AGENT_ADDR); a trial only asks for its group:
//
//   auto pg = ring::trial::ConnectProcessGroup(ctx);  // rendezvous through the master
//   pg->broadcast(std::span(params), /*root=*/0);
//   pg->allreduce(std::span(grads), ring::trial::ReduceOp::kAverage);
//
// Backends:
//   gloo          ring collectives over TCP between every rank (CPU buffers).
//   hierarchical  ranks on one agent reduce through shared memory, one leader
//                 per agent runs the Gloo ring across agents, and the result
//                 is shared back in memory (CPU buffers). `auto` picks it when
//                 some agent runs more than one rank.
//   nccl          NCCL (device buffers); built when CUDA and NCCL are found,
//                 chosen by `auto` on cuda slots.
//   single        world size 1: every call returns at once.
//
// Order of reduction (allreduce and reduce_scatter, sum and average). The
// hierarchical backend with every rank on one agent (shared memory) folds
// each element left in local rank order, ((x0 + x1) + x2) + ..., which is
// rank order when ranks are numbered host by host; across agents it
// folds each agent's ranks in local rank order, then the agents' partial
// sums left in agent order (agents numbered by their lowest rank; with one
// rank per agent that is rank order again). Either way an element's result
// depends only on the ranks' values of that element: not on the count, the
// offset, how a tensor is split into calls or which of the two collectives
// computed it, and every rank gets the same bits. kAverage divides that
// sum by size(). gloo's reduce_scatter folds in rank order too; gloo's
// allreduce with more than two ranks and nccl add in an order that depends
// on the buffer's length and an element's position (with two ranks there is
// one addition per element, exact either way round).
//
// Every collective takes a timeout; one that does not finish in time throws
// CollectiveError and leaves the group unusable. Every rank must call the
// same collectives in the same order with the same count and type. A group
// is used by one thread at a time.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "ring/trial/kv_store.h"

namespace ring::trial {

class Context;

enum class DataType { kFloat32, kFloat64, kInt32, kInt64 };
enum class ReduceOp { kSum, kAverage, kMin, kMax };  // kAverage: floating types only

size_t SizeOf(DataType type);

template <typename T>
constexpr DataType DataTypeOf() {
  if constexpr (std::is_same_v<T, float>)
    return DataType::kFloat32;
  else if constexpr (std::is_same_v<T, double>)
    return DataType::kFloat64;
  else if constexpr (std::is_same_v<T, int32_t>)
    return DataType::kInt32;
  else if constexpr (std::is_same_v<T, int64_t>)
    return DataType::kInt64;
  else
    static_assert(sizeof(T) == 0, "float, double, int32_t or int64_t");
}

using Timeout = std::chrono::milliseconds;
inline constexpr Timeout kDefaultCollectiveTimeout = std::chrono::minutes(5);

class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string backend() const = 0;  // "gloo", "hierarchical", "nccl", "single"
  // Whether allreduce (sum, average) adds each element in an order that
  // depends only on the ranks' values of it (see "Order of reduction");
  // reduce_scatter always does on the CPU backends.
  virtual bool allreduce_order_fixed() const { return false; }

  // In place over `count` elements.
  virtual void allreduce(void* data, size_t count, DataType type, ReduceOp op, Timeout timeout) = 0;
  // Root's `count` elements to every rank, in place.
  virtual void broadcast(void* data, size_t count, DataType type, int root, Timeout timeout) = 0;
  // `in` holds size() blocks of `count` elements; block r reduced over every
  // rank goes into rank r's `out` (`count` elements; it may be this rank's
  // block of `in`). The default allreduces a copy of `in`; backends override it.
  virtual void reduce_scatter(const void* in, void* out, size_t count, DataType type, ReduceOp op,
                              Timeout timeout);
  // `count` elements from every rank into `out` (size() * count), in rank order.
  virtual void allgather(const void* in, void* out, size_t count, DataType type, Timeout timeout) = 0;
  virtual void barrier(Timeout timeout) = 0;

  template <typename T>
  void allreduce(std::span<T> data, ReduceOp op = ReduceOp::kSum,
                 Timeout timeout = kDefaultCollectiveTimeout) {
    allreduce(data.data(), data.size(), DataTypeOf<T>(), op, timeout);
  }
  template <typename T>
  void broadcast(std::span<T> data, int root = 0, Timeout timeout = kDefaultCollectiveTimeout) {
    broadcast(data.data(), data.size(), DataTypeOf<T>(), root, timeout);
  }
  // `in` must hold a multiple of size() elements (else ConfigError).
  template <typename T>
  std::vector<T> reduce_scatter(std::span<const T> in, ReduceOp op = ReduceOp::kSum,
                                Timeout timeout = kDefaultCollectiveTimeout) {
    std::vector<T> out(BlockOf(in.size()));
    reduce_scatter(in.data(), out.data(), out.size(), DataTypeOf<T>(), op, timeout);
    return out;
  }
  template <typename T>
  std::vector<T> allgather(std::span<const T> in, Timeout timeout = kDefaultCollectiveTimeout) {
    std::vector<T> out(in.size() * static_cast<size_t>(size()));
    allgather(in.data(), out.data(), in.size(), DataTypeOf<T>(), timeout);
    return out;
  }

 private:
  size_t BlockOf(size_t total) const;  // total / size(), which must divide it
};

// Where this process sits among the ranks.
struct RankInfo {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;
  std::string agent_id;               // ranks with the same agent_id share a host
  std::string address = "127.0.0.1";  // this host's address the other ranks can reach
};

struct ProcessGroupOptions {
  std::string backend = "auto";  // auto | gloo | hierarchical | nccl
  Timeout rendezvous_timeout = std::chrono::minutes(5);
  std::string name = "default";  // groups of one trial need distinct names
};

// Rendezvous of every rank through `store`, then a connected group. Throws
// RendezvousError naming the ranks that never arrived when the timeout
// passes, and ConfigError for an unknown or unavailable backend.
std::unique_ptr<ProcessGroup> ConnectProcessGroup(const RankInfo& self, std::shared_ptr<KeyValueStore> store,
                                                  const ProcessGroupOptions& options = {});
// The same for this trial: its ranks from the environment, the master's
// store of its allocation. World size 1 (and local mode) gives "single".
std::unique_ptr<ProcessGroup> ConnectProcessGroup(const Context& ctx,
                                                  const ProcessGroupOptions& options = {});

// Whether this build has the NCCL backend, and a usable device is present.
bool NcclAvailable();

}  // namespace ring::trial
