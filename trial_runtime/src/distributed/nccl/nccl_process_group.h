#pragma once
// The "nccl" backend: NCCL collectives on CUDA device buffers. Built when
// CMake finds the CUDA toolkit and NCCL (nccl_backend.cmake, which defines
// RING_HAVE_NCCL); otherwise connecting throws ConfigError saying so.
#include <memory>

#include "distributed/backend.h"
#include "ring/trial/distributed.h"

namespace ring::trial::detail {

// Every rank reports whether it can use NCCL (a visible CUDA device) under
// the group's store, so that all ranks fail at once with ConfigError naming
// the ranks that cannot. Then rank 0 makes the ncclUniqueId, shares it
// through the store, and every rank joins the communicator on device
// LOCAL_RANK % device count, within the rendezvous deadline.
std::unique_ptr<ProcessGroup> ConnectNccl(const GroupPlan& plan);

}  // namespace ring::trial::detail
