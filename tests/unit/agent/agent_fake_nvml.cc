// A stand-in for libnvidia-ml.so.1 with two GPUs, loaded by the GPU detector
// test through dlopen: only the functions the agent declares.
#include <cstdio>

extern "C" {

struct nvmlDevice_st {
  int index;
};

static nvmlDevice_st g_devices[2] = {{0}, {1}};

int nvmlInit_v2() {
  return 0;
}
int nvmlShutdown() {
  return 0;
}

int nvmlDeviceGetCount_v2(unsigned int* count) {
  *count = 2;
  return 0;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_st** device) {
  if (index >= 2) return 2;  // NVML_ERROR_INVALID_ARGUMENT
  *device = &g_devices[index];
  return 0;
}

int nvmlDeviceGetUUID(nvmlDevice_st* device, char* uuid, unsigned int length) {
  std::snprintf(uuid, length, "GPU-fake-%d", device->index);
  return 0;
}

}  // extern "C"
