#pragma once
// Finds NVIDIA GPUs through NVML, loaded with dlopen at run time so the agent
// builds and runs on hosts without a driver. Called once at start on the
// main thread.
#include <string>
#include <vector>

#include "common/agent_protocol.h"

namespace ring {

// One "cuda" slot per GPU, ids 0..N-1 in NVML order, with the GPU's UUID.
// Returns none (and logs why at debug level) when the library is missing or
// NVML fails.
std::vector<proto::Slot> DetectGpus(const std::string& library = "libnvidia-ml.so.1");

// The slots this agent offers: the GPUs first (ids 0..G-1), then `cpu_slots`
// CPU slots. When there is no GPU and cpu_slots is 0, one CPU slot per CPU
// (`cpu_count`, at least 1).
std::vector<proto::Slot> BuildSlots(const std::vector<proto::Slot>& gpus, int cpu_slots, int cpu_count);

}  // namespace ring
