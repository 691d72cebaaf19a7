// The nccl backend. Without a usable GPU (or in a build without NCCL)
// asking for it is a clear ConfigError on every rank, and the GPU tests
// skip; with GPUs, ranks as threads reduce device buffers.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#ifdef RING_HAVE_NCCL
#include <cuda_runtime_api.h>
#endif

#include "ring/trial/distributed.h"
#include "ring/trial/errors.h"
#include "ring/trial/kv_store.h"
#include "tests/unit/distributed/distributed_thread_ranks.h"

namespace ring::trial {
namespace {

using namespace std::chrono_literals;
using testing::LoopbackRank;
using testing::RunThreads;

#ifdef RING_HAVE_NCCL
int DeviceCount() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) return 0;
  return count;
}

// `count` floats on the current device, filled from `host`; freed by the caller.
float* ToDevice(const std::vector<float>& host) {
  float* device = nullptr;
  if (cudaMalloc(reinterpret_cast<void**>(&device), host.size() * sizeof(float)) != cudaSuccess)
    return nullptr;
  cudaMemcpy(device, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice);
  return device;
}

std::vector<float> ToHost(const float* device, size_t count) {
  std::vector<float> host(count);
  cudaMemcpy(host.data(), device, count * sizeof(float), cudaMemcpyDeviceToHost);
  return host;
}
#endif

TEST(NcclTest, AskingForNcclWithoutAGpuIsAClearConfigErrorOnEveryRank) {
  if (NcclAvailable()) GTEST_SKIP() << "a GPU is present: the nccl backend is usable here";
  auto store = InMemoryStore();
  std::vector<std::string> messages(2);
  RunThreads(2, [&](int r) {
    try {
      ConnectProcessGroup(LoopbackRank(r, 2), store, {.backend = "nccl", .rendezvous_timeout = 20s});
      ADD_FAILURE() << "rank " << r << " connected an nccl group without a GPU";
    } catch (const ConfigError& e) {
      messages[static_cast<size_t>(r)] = e.what();
    }
  });
  for (int r = 0; r < 2; ++r) {
    const std::string& m = messages[static_cast<size_t>(r)];
    const bool no_device = m.find("cannot use NCCL: ") != std::string::npos &&
                           (m.find("cudaGetDeviceCount failed") != std::string::npos ||
                            m.find("no CUDA device") != std::string::npos);
    const bool not_built = m.find("the nccl backend is not in this build") != std::string::npos;
    EXPECT_TRUE(no_device || not_built) << m;
    EXPECT_NE(m.find("use gloo or hierarchical for CPU buffers"), std::string::npos) << m;
  }
}

TEST(NcclTest, AutoNeverPicksNcclForCpuBuffers) {
  auto store = InMemoryStore();
  RunThreads(2, [&](int r) {
    auto group = ConnectProcessGroup(LoopbackRank(r, 2), store, {.backend = "auto"});
    EXPECT_NE(group->backend(), "nccl");
  });
}

#ifdef RING_HAVE_NCCL

TEST(NcclTest, NcclAvailableMeansADeviceIsVisible) {
  EXPECT_EQ(NcclAvailable(), DeviceCount() > 0);
}

TEST(NcclTest, OneRankReducesADeviceBufferAndRefusesHostMemory) {
  if (!NcclAvailable()) GTEST_SKIP() << "no GPU: NcclAvailable() is false";
  auto group = ConnectProcessGroup(LoopbackRank(0, 1), InMemoryStore(), {.backend = "nccl"});
  EXPECT_EQ(group->backend(), "nccl");
  std::vector<float> host{1, 2, 3};
  float* device = ToDevice(host);
  ASSERT_NE(device, nullptr);
  group->allreduce(device, 3, DataType::kFloat32, ReduceOp::kSum, 10s);
  EXPECT_EQ(ToHost(device, 3), host);
  group->barrier(10s);
  EXPECT_THROW(group->allreduce(host.data(), 3, DataType::kFloat32, ReduceOp::kSum, 10s), ConfigError);
  group->allreduce(device, 3, DataType::kFloat32, ReduceOp::kSum, 10s);  // still usable
  cudaFree(device);
}

TEST(NcclTest, RanksOnSeparateGpusRunEveryCollective) {
  const int world = DeviceCount();
  if (world < 2) GTEST_SKIP() << "no GPU: " << world << " device(s), this test needs 2";
  auto store = InMemoryStore();
  RunThreads(world, [&](int r) {
    auto group =
        ConnectProcessGroup(LoopbackRank(r, world), store, {.backend = "nccl", .rendezvous_timeout = 60s});
    cudaSetDevice(r);  // LoopbackRank's local rank is its rank: the group uses device r
    float* data = ToDevice(std::vector<float>(1000, static_cast<float>(r + 1)));
    group->allreduce(data, 1000, DataType::kFloat32, ReduceOp::kSum, 30s);
    EXPECT_EQ(ToHost(data, 1000), std::vector<float>(1000, static_cast<float>(world * (world + 1) / 2)));
    group->allreduce(data, 1000, DataType::kFloat32, ReduceOp::kAverage, 30s);
    EXPECT_EQ(ToHost(data, 1)[0], static_cast<float>(world * (world + 1) / 2));
    cudaMemcpy(data, std::vector<float>(1000, static_cast<float>(r)).data(), 1000 * sizeof(float),
               cudaMemcpyHostToDevice);
    group->broadcast(data, 1000, DataType::kFloat32, world - 1, 30s);
    EXPECT_EQ(ToHost(data, 1000), std::vector<float>(1000, static_cast<float>(world - 1)));
    float* all = ToDevice(std::vector<float>(static_cast<size_t>(world) * 2, -1.0f));
    float* mine = ToDevice({static_cast<float>(r), static_cast<float>(10 * r)});
    group->allgather(mine, all, 2, DataType::kFloat32, 30s);
    const auto gathered = ToHost(all, static_cast<size_t>(world) * 2);
    for (int k = 0; k < world; ++k) {
      EXPECT_EQ(gathered[static_cast<size_t>(2 * k)], static_cast<float>(k));
      EXPECT_EQ(gathered[static_cast<size_t>(2 * k + 1)], static_cast<float>(10 * k));
    }
    group->barrier(30s);
    cudaFree(data);
    cudaFree(all);
    cudaFree(mine);
  });
}

#else

TEST(NcclTest, GpuCollectives) {
  GTEST_SKIP() << "no GPU: this build has no NCCL backend";
}

#endif

}  // namespace
}  // namespace ring::trial
