// The nccl backend of a build without CUDA or NCCL: asking for it is a
// configuration error, and NcclAvailable() is false.
#include "distributed/nccl/nccl_process_group.h"
#include "ring/trial/errors.h"

namespace ring::trial {

bool NcclAvailable() {
  return false;
}

namespace detail {

std::unique_ptr<ProcessGroup> ConnectNccl(const GroupPlan& plan) {
  throw ConfigError(
      "process group " + plan.name +
      ": the nccl backend is not in this build of the trial runtime (CMake found no CUDA toolkit "
      "or no NCCL when ringtrial was built); use gloo or hierarchical for CPU buffers");
}

}  // namespace detail
}  // namespace ring::trial
