// NcclProcessGroup: one NCCL communicator (non-blocking, so that every wait
// can be bounded), one CUDA stream and a one-element scratch buffer for
// barriers, on the device chosen at connect time. Each collective is
// enqueued inside ncclGroupStart/ncclGroupEnd on the group's stream and then
// awaited by polling ncclCommGetAsyncError and cudaStreamQuery; a failure or
// the timeout aborts the communicator (ncclCommAbort), after which the group
// refuses work. Used by one thread at a time (any thread: each call selects
// the group's device first).
#include <cstddef>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "distributed/collective_args.h"
#include "distributed/nccl/nccl_process_group.h"
#include "distributed/nccl/nccl_support.h"
#include "distributed/store_keys.h"
#include "ring/trial/errors.h"

namespace ring::trial {

bool NcclAvailable() {
  int count = 0;
  return detail::nccl::DeviceProblem(&count).empty();
}

namespace detail {
namespace {

using nccl::Clock;
using nccl::Describe;

class NcclProcessGroup final : public ProcessGroup {
 public:
  NcclProcessGroup(std::string name, int rank, int size, int device, ncclComm_t comm, cudaStream_t stream,
                   float* scratch)
      : name_(std::move(name)),
        rank_(rank),
        size_(size),
        device_(device),
        comm_(comm),
        stream_(stream),
        scratch_(scratch) {}

  ~NcclProcessGroup() override {
    cudaSetDevice(device_);
    if (comm_ != nullptr) {
      // Finalize waits for the peers' outstanding work; bounded, then abort.
      const ncclResult_t finalized = ncclCommFinalize(comm_);
      const bool clean =
          (finalized == ncclSuccess || finalized == ncclInProgress) &&
          nccl::AwaitCompletion(comm_, nullptr, Clock::now() + std::chrono::seconds(10)).empty();
      if (clean)
        ncclCommDestroy(comm_);
      else
        ncclCommAbort(comm_);
    }
    cudaFree(scratch_);
    cudaStreamDestroy(stream_);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string backend() const override { return "nccl"; }

  void allreduce(void* data, size_t count, DataType type, ReduceOp op, Timeout timeout) override {
    CheckTimeout(timeout, "allreduce");
    CheckReduce(type, op);
    CheckBuffer(data, count, "allreduce");
    const std::string what = std::string("allreduce (") + ReduceOpName(op) + " of " + std::to_string(count) +
                             " " + DataTypeName(type) + ")";
    if (count == 0) return Run(what, timeout, nullptr);
    CheckDevicePointer(data, what);
    Run(what, timeout, [&] {
      return ncclAllReduce(data, data, count, nccl::ToNccl(type), nccl::ToNccl(op), comm_, stream_);
    });
  }

  void broadcast(void* data, size_t count, DataType type, int root, Timeout timeout) override {
    CheckTimeout(timeout, "broadcast");
    SizeOf(type);
    CheckRoot(root, size_);
    CheckBuffer(data, count, "broadcast");
    const std::string what = "broadcast (" + std::to_string(count) + " " + DataTypeName(type) +
                             " from rank " + std::to_string(root) + ")";
    if (count == 0) return Run(what, timeout, nullptr);
    CheckDevicePointer(data, what);
    Run(what, timeout,
        [&] { return ncclBroadcast(data, data, count, nccl::ToNccl(type), root, comm_, stream_); });
  }

  void reduce_scatter(const void* in, void* out, size_t count, DataType type, ReduceOp op,
                      Timeout timeout) override {
    CheckTimeout(timeout, "reduce_scatter");
    CheckReduce(type, op);
    CheckBuffer(in, count, "reduce_scatter");
    CheckBuffer(out, count, "reduce_scatter");
    const std::string what = std::string("reduce_scatter (") + ReduceOpName(op) + " of " +
                             std::to_string(count) + " " + DataTypeName(type) + " per rank)";
    if (count == 0) return Run(what, timeout, nullptr);
    CheckDevicePointer(in, what);
    CheckDevicePointer(out, what);
    Run(what, timeout, [&] {
      return ncclReduceScatter(in, out, count, nccl::ToNccl(type), nccl::ToNccl(op), comm_, stream_);
    });
  }

  void allgather(const void* in, void* out, size_t count, DataType type, Timeout timeout) override {
    CheckTimeout(timeout, "allgather");
    SizeOf(type);
    CheckBuffer(in, count, "allgather");
    CheckBuffer(out, count, "allgather");
    const std::string what = "allgather (" + std::to_string(count) + " " + DataTypeName(type) + " per rank)";
    if (count == 0) return Run(what, timeout, nullptr);
    CheckDevicePointer(in, what);
    CheckDevicePointer(out, what);
    Run(what, timeout, [&] { return ncclAllGather(in, out, count, nccl::ToNccl(type), comm_, stream_); });
  }

  void barrier(Timeout timeout) override {
    CheckTimeout(timeout, "barrier");
    Run("barrier", timeout,
        [&] { return ncclAllReduce(scratch_, scratch_, 1, ncclFloat32, ncclSum, comm_, stream_); });
  }

 private:
  // Device (or managed) memory of this group's device; host memory is a
  // usage error that leaves the group usable.
  void CheckDevicePointer(const void* p, const std::string& what) const {
    cudaPointerAttributes attributes{};
    const cudaError_t error = cudaPointerGetAttributes(&attributes, p);
    if (error != cudaSuccess) {
      cudaGetLastError();
      throw ConfigError(what +
                        " on the nccl backend: cannot tell where the buffer lives: " + Describe(error));
    }
    if (attributes.type != cudaMemoryTypeDevice && attributes.type != cudaMemoryTypeManaged)
      throw ConfigError(what +
                        " on the nccl backend: the buffer is host memory; this backend reduces CUDA device "
                        "buffers (cudaMalloc on device " +
                        std::to_string(device_) + "); use gloo or hierarchical for CPU buffers");
    if (attributes.type == cudaMemoryTypeDevice && attributes.device != device_)
      throw ConfigError(what + " on the nccl backend: the buffer is on device " +
                        std::to_string(attributes.device) + ", this rank's group uses device " +
                        std::to_string(device_));
  }

  // Enqueues `enqueue` (null: nothing, for empty buffers) inside one NCCL
  // group and waits for it on the stream until the timeout.
  template <typename Enqueue>
  void Run(const std::string& what, Timeout timeout, Enqueue&& enqueue) {
    if (!broken_.empty())
      throw CollectiveError(what + " on rank " + std::to_string(rank_) + ": process group " + name_ +
                            " (nccl) is unusable after an earlier failure: " + broken_);
    if constexpr (!std::is_same_v<std::decay_t<Enqueue>, std::nullptr_t>) {
      const auto deadline = Clock::now() + timeout;
      std::string reason;
      const cudaError_t selected = cudaSetDevice(device_);
      if (selected != cudaSuccess) {
        reason = "cudaSetDevice(" + std::to_string(device_) + "): " + Describe(selected);
      } else {
        ncclResult_t result = ncclGroupStart();
        if (result == ncclSuccess) {
          const ncclResult_t queued = enqueue();
          result = ncclGroupEnd();
          if (queued != ncclSuccess && queued != ncclInProgress) result = queued;
        }
        if (result != ncclSuccess && result != ncclInProgress)
          reason = Describe(result, comm_);
        else
          reason = nccl::AwaitCompletion(comm_, stream_, deadline);
      }
      if (reason.empty()) return;
      Fail(what, timeout, reason);
    }
  }

  [[noreturn]] void Fail(const std::string& what, Timeout timeout, const std::string& reason) {
    broken_ = what + ": " + reason;
    ncclCommAbort(comm_);
    comm_ = nullptr;
    throw CollectiveError(what + " failed on rank " + std::to_string(rank_) + " of " + std::to_string(size_) +
                          " in process group " + name_ + " (nccl, timeout " + DescribeTimeout(timeout) +
                          "): " + reason +
                          " (a peer stopped or called another collective, or the device failed)");
  }

  std::string name_;
  int rank_;
  int size_;
  int device_;
  ncclComm_t comm_;  // null once aborted
  cudaStream_t stream_;
  float* scratch_;      // one device float for barriers
  std::string broken_;  // why the group is unusable, once it is
};

Timeout Left(const GroupPlan& plan) {
  const auto left = std::chrono::duration_cast<Timeout>(plan.deadline - Clock::now());
  if (left.count() <= 0)
    throw RendezvousError("rendezvous of group " + plan.name + " timed out after " +
                          DescribeTimeout(plan.timeout) + " while connecting the nccl backend");
  return left;
}

KeyValueStore::Bytes ToBytes(const std::string& text) {
  return KeyValueStore::Bytes(text.begin(), text.end());
}

// Every rank publishes whether it can use NCCL. One that cannot fails at
// once; the others fail as soon as they read its report, instead of waiting
// for it in ncclCommInitRank until the deadline.
int ChooseDevice(const GroupPlan& plan) {
  const int self = plan.self.rank;
  int count = 0;
  const std::string problem = nccl::DeviceProblem(&count);
  plan.store->set("nccl/status/" + std::to_string(self), ToBytes(problem.empty() ? "ok" : problem));
  const std::string advice =
      "; the nccl backend reduces CUDA device buffers and needs a GPU on every rank "
      "(use gloo or hierarchical for CPU buffers)";
  if (!problem.empty())
    throw ConfigError("process group " + plan.name + ": rank " + std::to_string(self) +
                      " cannot use NCCL: " + problem + advice);
  std::string others;
  for (int r = 0; r < plan.self.world_size; ++r) {
    if (r == self) continue;
    const auto status = plan.store->get("nccl/status/" + std::to_string(r), Left(plan));
    const std::string text(status.begin(), status.end());
    if (text != "ok") others += (others.empty() ? "" : "; ") + ("rank " + std::to_string(r) + ": " + text);
  }
  if (!others.empty())
    throw ConfigError("process group " + plan.name + ": other ranks cannot use NCCL (" + others + ")" +
                      advice);
  return plan.self.local_rank % count;
}

ncclUniqueId ShareUniqueId(const GroupPlan& plan) {
  ncclUniqueId id{};
  if (plan.self.rank == 0) {
    const ncclResult_t made = ncclGetUniqueId(&id);
    if (made != ncclSuccess)
      throw RendezvousError("process group " + plan.name +
                            ": ncclGetUniqueId failed on rank 0: " + Describe(made, nullptr));
    plan.store->set("nccl/unique_id", KeyValueStore::Bytes(id.internal, id.internal + sizeof(id.internal)));
    return id;
  }
  const auto bytes = plan.store->get("nccl/unique_id", Left(plan));
  if (bytes.size() != sizeof(id.internal))
    throw RendezvousError("process group " + plan.name + ": the ncclUniqueId rank 0 published has " +
                          std::to_string(bytes.size()) + " bytes, not " +
                          std::to_string(sizeof(id.internal)));
  std::memcpy(id.internal, bytes.data(), bytes.size());
  return id;
}

[[noreturn]] void FailConnect(const GroupPlan& plan, int device, const std::string& step,
                              const std::string& why) {
  throw RendezvousError("process group " + plan.name + ": rank " + std::to_string(plan.self.rank) +
                        " (device " + std::to_string(device) + ") " + step + " failed: " + why);
}

}  // namespace

std::unique_ptr<ProcessGroup> ConnectNccl(const GroupPlan& plan) {
  const int device = ChooseDevice(plan);
  const ncclUniqueId id = ShareUniqueId(plan);
  if (const cudaError_t e = cudaSetDevice(device); e != cudaSuccess)
    FailConnect(plan, device, "cudaSetDevice", Describe(e));

  // Non-blocking, so that joining (and later every collective) can be
  // abandoned at the deadline rather than block forever on a missing peer.
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclComm_t comm = nullptr;
  const ncclResult_t init = ncclCommInitRankConfig(&comm, plan.self.world_size, id, plan.self.rank, &config);
  std::string why;
  if (init != ncclSuccess && init != ncclInProgress)
    why = Describe(init, comm);
  else
    why = nccl::AwaitCompletion(comm, nullptr, plan.deadline);
  if (!why.empty()) {
    if (comm != nullptr) ncclCommAbort(comm);
    if (why == "timed out") why = "not every rank joined within " + DescribeTimeout(plan.timeout);
    FailConnect(plan, device, "ncclCommInitRank", why);
  }

  cudaStream_t stream = nullptr;
  float* scratch = nullptr;
  cudaError_t e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  if (e == cudaSuccess) e = cudaMalloc(reinterpret_cast<void**>(&scratch), sizeof(float));
  if (e == cudaSuccess) e = cudaMemset(scratch, 0, sizeof(float));
  if (e != cudaSuccess) {
    ncclCommAbort(comm);
    if (scratch != nullptr) cudaFree(scratch);
    if (stream != nullptr) cudaStreamDestroy(stream);
    FailConnect(plan, device, "allocating its stream and scratch buffer", Describe(e));
  }
  return std::make_unique<NcclProcessGroup>(plan.name, plan.self.rank, plan.self.world_size, device, comm,
                                            stream, scratch);
}

}  // namespace detail
}  // namespace ring::trial
