#include "distributed/nccl/nccl_support.h"

#include <thread>

namespace ring::trial::detail::nccl {

std::string DeviceProblem(int* device_count) {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) {
    cudaGetLastError();  // clear it, so later CUDA calls do not report it again
    return "cudaGetDeviceCount failed: " + Describe(error);
  }
  if (count == 0) return "no CUDA device is visible to this process (check CUDA_VISIBLE_DEVICES)";
  *device_count = count;
  return "";
}

ncclDataType_t ToNccl(DataType type) {
  switch (type) {
    case DataType::kFloat32:
      return ncclFloat32;
    case DataType::kFloat64:
      return ncclFloat64;
    case DataType::kInt32:
      return ncclInt32;
    case DataType::kInt64:
      return ncclInt64;
  }
  return ncclFloat32;
}

ncclRedOp_t ToNccl(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return ncclSum;
    case ReduceOp::kAverage:
      return ncclAvg;
    case ReduceOp::kMin:
      return ncclMin;
    case ReduceOp::kMax:
      return ncclMax;
  }
  return ncclSum;
}

std::string Describe(ncclResult_t result, ncclComm_t comm) {
  std::string text = ncclGetErrorString(result);
  const char* last = ncclGetLastError(comm);
  if (last != nullptr && *last != '\0') text += ": " + std::string(last);
  return text + " (run with NCCL_DEBUG=INFO for details)";
}

std::string Describe(cudaError_t error) {
  return std::string(cudaGetErrorString(error)) + " (error " + std::to_string(static_cast<int>(error)) + ")";
}

std::string AwaitCompletion(ncclComm_t comm, cudaStream_t stream, Clock::time_point deadline) {
  // Busy at first (collectives on small buffers finish in microseconds),
  // then sleeping up to a millisecond between looks.
  auto pause = std::chrono::microseconds(0);
  for (;;) {
    ncclResult_t state = ncclSuccess;
    const ncclResult_t asked = ncclCommGetAsyncError(comm, &state);
    if (asked != ncclSuccess) return "ncclCommGetAsyncError: " + Describe(asked, comm);
    if (state != ncclSuccess && state != ncclInProgress) return Describe(state, comm);
    if (state == ncclSuccess) {
      if (stream == nullptr) return "";
      const cudaError_t query = cudaStreamQuery(stream);
      if (query == cudaSuccess) return "";
      if (query != cudaErrorNotReady) return "cudaStreamQuery: " + Describe(query);
    }
    if (Clock::now() >= deadline) return "timed out";
    if (pause.count() == 0) {
      std::this_thread::yield();
      pause = std::chrono::microseconds(10);
    } else {
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::microseconds(1000));
    }
  }
}

}  // namespace ring::trial::detail::nccl
