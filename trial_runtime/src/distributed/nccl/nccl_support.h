#pragma once
// Helpers of the nccl backend (RING_HAVE_NCCL builds only): the device
// probe, type and op mapping, error text, and the bounded wait for work
// enqueued on a non-blocking communicator.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <string>

#include "ring/trial/distributed.h"

namespace ring::trial::detail::nccl {

using Clock = std::chrono::steady_clock;

// Empty when this process sees at least one CUDA device (and sets
// *device_count), otherwise why not, e.g. "cudaGetDeviceCount failed: CUDA
// driver version is insufficient for CUDA runtime version (error 35)".
std::string DeviceProblem(int* device_count);

ncclDataType_t ToNccl(DataType type);
ncclRedOp_t ToNccl(ReduceOp op);

// "unhandled cuda error (run with NCCL_DEBUG=INFO for details): <last error>".
std::string Describe(ncclResult_t result, ncclComm_t comm);
std::string Describe(cudaError_t error);

// Polls until the communicator has no operation in progress and, when
// `stream` is not null, the stream is idle. Returns "" on success, or why
// not: NCCL's asynchronous error, a CUDA error, or the deadline passing.
std::string AwaitCompletion(ncclComm_t comm, cudaStream_t stream, Clock::time_point deadline);

}  // namespace ring::trial::detail::nccl
