// A stand-in for libcuda.so.1 that fails on request, for the driver loader's failure paths
// and the CUDA runtime's memory, copies and launch bookkeeping (test_cuda_driver.cpp,
// test_cuda_runtime.cpp). Its "device memory" is host memory, so copies keep their bytes;
// kernels are not run (nothing here runs PTX), only counted. FAKE_LIBCUDA selects the
// behaviour: "ok" (one device, sm_90), "no_device" (cuInit fails), "zero_devices",
// "out_of_memory" (every cuMemAlloc fails), "launch_error" (cuLaunchKernel fails),
// "old_gpu" (compute capability 7.0); FAKE_LIBCUDA_MEMORY caps the bytes allocated at once.
// Built twice: fake_libcuda_old lacks cuMemAlloc_v2, as a driver older than Kiln's oldest would.
#include "backend/cuda/driver_api.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

using namespace kiln::detail::cuda;

namespace {

bool mode(const char* name) {
  const char* value = std::getenv("FAKE_LIBCUDA");
  return value && std::strcmp(value, name) == 0;
}

constexpr CUresult kLaunchFailed = 719;

struct Memory {
  std::mutex mutex;
  std::map<CUdeviceptr, size_t> blocks;
  size_t in_use = 0;
  size_t limit() const {
    const char* value = std::getenv("FAKE_LIBCUDA_MEMORY");
    return value ? std::strtoull(value, nullptr, 10) : SIZE_MAX;
  }
};
Memory& memory() {
  static Memory* instance = new Memory();
  return *instance;
}

int launches = 0;

}  // namespace

extern "C" {
CUresult cuInit(unsigned) { return mode("no_device") ? CUDA_ERROR_NO_DEVICE : CUDA_SUCCESS; }
CUresult cuDriverGetVersion(int* version) { return *version = 13000, CUDA_SUCCESS; }
CUresult cuGetErrorName(CUresult result, const char** name) {
  switch (result) {
    case CUDA_SUCCESS: *name = "CUDA_SUCCESS"; return CUDA_SUCCESS;
    case CUDA_ERROR_OUT_OF_MEMORY: *name = "CUDA_ERROR_OUT_OF_MEMORY"; return CUDA_SUCCESS;
    case CUDA_ERROR_NO_DEVICE: *name = "CUDA_ERROR_NO_DEVICE"; return CUDA_SUCCESS;
    case kLaunchFailed: *name = "CUDA_ERROR_LAUNCH_FAILED"; return CUDA_SUCCESS;
    default: return 1;  // CUDA_ERROR_INVALID_VALUE
  }
}
CUresult cuGetErrorString(CUresult result, const char** text) {
  switch (result) {
    case CUDA_ERROR_OUT_OF_MEMORY: *text = "out of memory"; return CUDA_SUCCESS;
    case CUDA_ERROR_NO_DEVICE: *text = "no CUDA-capable device is detected"; return CUDA_SUCCESS;
    case kLaunchFailed: *text = "unspecified launch failure"; return CUDA_SUCCESS;
    default: return 1;
  }
}
CUresult cuDeviceGetCount(int* count) { return *count = mode("zero_devices") ? 0 : 1, CUDA_SUCCESS; }
CUresult cuDeviceGet(CUdevice* device, int ordinal) { return *device = ordinal, CUDA_SUCCESS; }
CUresult cuDeviceGetName(char* name, int length, CUdevice) {
  std::strncpy(name, "Fake GPU", size_t(length));
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetAttribute(int* value, int attribute, CUdevice) {
  if (attribute == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
    *value = mode("old_gpu") ? 7 : 9;
  else
    *value = 0;
  return CUDA_SUCCESS;
}
CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice) { return *bytes = size_t(1) << 30, CUDA_SUCCESS; }
CUresult cuDevicePrimaryCtxRetain(CUcontext* context, CUdevice) { return *context = nullptr, CUDA_SUCCESS; }
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice) { return CUDA_SUCCESS; }
CUresult cuCtxSetCurrent(CUcontext) { return CUDA_SUCCESS; }
CUresult cuCtxSynchronize() { return CUDA_SUCCESS; }
CUresult cuStreamCreate(CUstream* stream, unsigned) { return *stream = nullptr, CUDA_SUCCESS; }
CUresult cuStreamDestroy_v2(CUstream) { return CUDA_SUCCESS; }
CUresult cuStreamSynchronize(CUstream) { return CUDA_SUCCESS; }
CUresult cuStreamQuery(CUstream) { return CUDA_SUCCESS; }
CUresult cuMemGetInfo_v2(size_t* free, size_t* total) {
  std::lock_guard<std::mutex> lock(memory().mutex);
  *total = std::min<size_t>(memory().limit(), size_t(1) << 30);
  *free = *total - std::min(*total, memory().in_use);
  return CUDA_SUCCESS;
}
#ifndef FAKE_LIBCUDA_OLD
CUresult cuMemAlloc_v2(CUdeviceptr* pointer, size_t bytes) {
  std::lock_guard<std::mutex> lock(memory().mutex);
  if (mode("out_of_memory") || memory().in_use + bytes > memory().limit()) return CUDA_ERROR_OUT_OF_MEMORY;
  *pointer = CUdeviceptr(reinterpret_cast<uintptr_t>(std::malloc(bytes)));
  memory().blocks[*pointer] = bytes;
  memory().in_use += bytes;
  return CUDA_SUCCESS;
}
#endif
CUresult cuMemAlloc(CUdeviceptr*, unsigned) { return CUDA_ERROR_NOT_INITIALIZED; }  // the pre-_v2 symbol
CUresult cuMemFree_v2(CUdeviceptr pointer) {
  std::lock_guard<std::mutex> lock(memory().mutex);
  auto it = memory().blocks.find(pointer);
  if (it == memory().blocks.end()) return 1;  // CUDA_ERROR_INVALID_VALUE: not a block of ours
  memory().in_use -= it->second;
  memory().blocks.erase(it);
  std::free(reinterpret_cast<void*>(uintptr_t(pointer)));
  return CUDA_SUCCESS;
}
CUresult cuMemAllocHost_v2(void** pointer, size_t bytes) { return *pointer = std::malloc(bytes), CUDA_SUCCESS; }
CUresult cuMemFreeHost(void* pointer) { return std::free(pointer), CUDA_SUCCESS; }
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr to, const void* from, size_t bytes, CUstream) {
  std::memcpy(reinterpret_cast<void*>(uintptr_t(to)), from, bytes);
  return CUDA_SUCCESS;
}
CUresult cuMemcpyDtoHAsync_v2(void* to, CUdeviceptr from, size_t bytes, CUstream) {
  std::memcpy(to, reinterpret_cast<const void*>(uintptr_t(from)), bytes);
  return CUDA_SUCCESS;
}
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr to, CUdeviceptr from, size_t bytes, CUstream) {
  std::memmove(reinterpret_cast<void*>(uintptr_t(to)), reinterpret_cast<const void*>(uintptr_t(from)), bytes);
  return CUDA_SUCCESS;
}
CUresult cuMemsetD8Async(CUdeviceptr to, unsigned char value, size_t bytes, CUstream) {
  std::memset(reinterpret_cast<void*>(uintptr_t(to)), value, bytes);
  return CUDA_SUCCESS;
}
CUresult cuModuleLoadDataEx(CUmodule* module, const void*, unsigned, int*, void**) {
  return *module = nullptr, CUDA_SUCCESS;
}
CUresult cuModuleUnload(CUmodule) { return CUDA_SUCCESS; }
CUresult cuModuleGetFunction(CUfunction* function, CUmodule, const char*) { return *function = nullptr, CUDA_SUCCESS; }
CUresult cuLinkCreate_v2(unsigned, int*, void**, CUlinkState* state) { return *state = nullptr, CUDA_SUCCESS; }
CUresult cuLinkAddData_v2(CUlinkState, int, void*, size_t, const char*, unsigned, int*, void**) { return CUDA_SUCCESS; }
CUresult cuLinkComplete(CUlinkState, void** image, size_t* bytes) {
  static char binary[] = "fake cubin";
  return *image = binary, *bytes = sizeof binary, CUDA_SUCCESS;
}
CUresult cuLinkDestroy(CUlinkState) { return CUDA_SUCCESS; }
CUresult cuOccupancyMaxPotentialBlockSize(int* grid, int* block, CUfunction, CUoccupancyB2DSize, size_t, int) {
  return *grid = 132, *block = 768, CUDA_SUCCESS;
}
CUresult cuLaunchKernel(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                        void**, void**) {
  if (mode("launch_error")) return kLaunchFailed;
  ++launches;
  return CUDA_SUCCESS;
}
/// Not a driver function: kernels launched so far (the tests read it).
int fake_cuda_launches() { return launches; }
}
