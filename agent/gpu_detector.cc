#include "agent/gpu_detector.h"

#include <dlfcn.h>

#include <algorithm>

#include <spdlog/spdlog.h>

namespace ring {
namespace {

// The few NVML declarations used (no nvml.h on build hosts). nvmlReturn_t is
// an int-sized enum where 0 means success.
using NvmlReturn = int;
using NvmlDevice = struct NvmlDeviceOpaque*;
using NvmlInitFn = NvmlReturn (*)();
using NvmlShutdownFn = NvmlReturn (*)();
using NvmlGetCountFn = NvmlReturn (*)(unsigned int*);
using NvmlGetHandleFn = NvmlReturn (*)(unsigned int, NvmlDevice*);
using NvmlGetUuidFn = NvmlReturn (*)(NvmlDevice, char*, unsigned int);
constexpr unsigned int kUuidBufferSize = 96;  // NVML_DEVICE_UUID_V2_BUFFER_SIZE

// Closes the library handle on every return path.
struct Library {
  void* handle = nullptr;
  ~Library() {
    if (handle) dlclose(handle);
  }
  template <typename Fn>
  Fn Symbol(const char* name) const {
    return reinterpret_cast<Fn>(dlsym(handle, name));
  }
};

}  // namespace

std::vector<proto::Slot> DetectGpus(const std::string& library) {
  Library lib;
  lib.handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib.handle) {
    const char* err = dlerror();
    spdlog::debug("[agent] no GPUs: cannot load {}: {}", library, err ? err : "unknown error");
    return {};
  }
  auto init = lib.Symbol<NvmlInitFn>("nvmlInit_v2");
  auto shutdown = lib.Symbol<NvmlShutdownFn>("nvmlShutdown");
  auto get_count = lib.Symbol<NvmlGetCountFn>("nvmlDeviceGetCount_v2");
  auto get_handle = lib.Symbol<NvmlGetHandleFn>("nvmlDeviceGetHandleByIndex_v2");
  auto get_uuid = lib.Symbol<NvmlGetUuidFn>("nvmlDeviceGetUUID");
  if (!init || !shutdown || !get_count || !get_handle || !get_uuid) {
    spdlog::debug("[agent] no GPUs: {} lacks an NVML function", library);
    return {};
  }
  if (NvmlReturn rc = init(); rc != 0) {
    spdlog::debug("[agent] no GPUs: nvmlInit_v2 returned {}", rc);
    return {};
  }
  std::vector<proto::Slot> slots;
  unsigned int count = 0;
  if (NvmlReturn rc = get_count(&count); rc != 0) {
    spdlog::debug("[agent] no GPUs: nvmlDeviceGetCount_v2 returned {}", rc);
    count = 0;
  }
  for (unsigned int i = 0; i < count; ++i) {
    NvmlDevice device = nullptr;
    char uuid[kUuidBufferSize] = {};
    if (NvmlReturn rc = get_handle(i, &device); rc != 0) {
      spdlog::warn("[agent] GPU {} skipped: nvmlDeviceGetHandleByIndex_v2 returned {}", i, rc);
      continue;
    }
    if (NvmlReturn rc = get_uuid(device, uuid, kUuidBufferSize); rc != 0) {
      spdlog::warn("[agent] GPU {} has no UUID (nvmlDeviceGetUUID returned {}); using its index", i, rc);
      uuid[0] = '\0';
    }
    uuid[kUuidBufferSize - 1] = '\0';
    slots.push_back(proto::Slot{static_cast<int>(slots.size()), "cuda", uuid});
  }
  shutdown();
  spdlog::debug("[agent] NVML found {} GPU(s)", slots.size());
  return slots;
}

std::vector<proto::Slot> BuildSlots(const std::vector<proto::Slot>& gpus, int cpu_slots, int cpu_count) {
  std::vector<proto::Slot> slots;
  for (const auto& gpu : gpus) slots.push_back(proto::Slot{static_cast<int>(slots.size()), "cuda", gpu.uuid});
  int cpus = cpu_slots;
  if (cpus == 0 && gpus.empty()) cpus = std::max(cpu_count, 1);
  for (int i = 0; i < cpus; ++i) slots.push_back(proto::Slot{static_cast<int>(slots.size()), "cpu", ""});
  return slots;
}

}  // namespace ring
