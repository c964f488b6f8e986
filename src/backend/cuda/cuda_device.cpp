// Setting up the GPU (primary context, stream, page-locked launch state), its memory for
// the pool, the copies, and the registration of the CUDA device's memory: the GPU's, or
// under KILN_DEVICE=cuda-emulated the emulated device's host memory.
#include "backend/cuda/cuda_device.h"

#include <kiln/errors.h>

#include <chrono>
#include <new>
#include <thread>

namespace kiln::detail::cuda {
namespace {
constexpr CUresult CUDA_ERROR_NOT_READY = 600;

DeviceMemory& cuda_device_memory() {
  if (emulated_cuda()) return emulated_device_memory();
  return CudaDevice::get();
}
[[maybe_unused]] const bool kRegistered = (register_device_memory(Device::CUDA, &cuda_device_memory), true);

CUdeviceptr address(const void* pointer) { return CUdeviceptr(reinterpret_cast<uintptr_t>(pointer)); }
}  // namespace

CudaDevice& CudaDevice::get() {
  static CudaDevice* instance = new CudaDevice();  // lives as long as the process: buffers point into it
  return *instance;
}

CudaDevice::CudaDevice() {
  const Driver& d = driver();
  if (!d.unavailable.empty()) {
    unavailable_ = d.unavailable;
    return;
  }
  const DriverApi& api = d.api;
  auto failed = [&](CUresult result, const char* call) {
    if (result == CUDA_SUCCESS) return false;
    unavailable_ = "the GPU could not be set up: " + describe_failure(api, call, result);
    return true;
  };
  int major = 0, minor = 0;
  char name[256] = {};
  if (failed(api.cuDeviceGet(&device_, 0), "cuDeviceGet") ||
      failed(api.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device_),
             "cuDeviceGetAttribute") ||
      failed(api.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device_),
             "cuDeviceGetAttribute") ||
      failed(api.cuDeviceGetName(name, sizeof name - 1, device_), "cuDeviceGetName"))
    return;
  name_ = name;
  compute_capability_ = unsigned(major * 10 + minor);
  if (compute_capability_ < 75) {
    unavailable_ = name_ + " has compute capability " + std::to_string(major) + "." + std::to_string(minor) +
                   "; Kiln's kernels need 7.5 (Turing) or newer";
    return;
  }
  if (failed(api.cuDevicePrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain") ||
      failed(api.cuCtxSetCurrent(context_), "cuCtxSetCurrent") ||
      failed(api.cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate"))
    return;
  // One page-locked block, mapped into the GPU's address space at the same address
  // (unified addressing): the launch state, then the flag the kernels poll.
  void* pinned = nullptr;
  if (failed(api.cuMemAllocHost(&pinned, sizeof(CheckState) + 64), "cuMemAllocHost")) return;
  launch_state_ = new (pinned) CheckState();
  device_interrupt_ = new (static_cast<char*>(pinned) + sizeof(CheckState)) std::atomic<uint32_t>(0);
  launch_state_->interrupt = device_interrupt_;
}

void CudaDevice::make_current() const {
  thread_local const CudaDevice* current = nullptr;
  if (current == this) return;
  check(api().cuCtxSetCurrent(context_), "cuCtxSetCurrent");
  current = this;
}

void CudaDevice::check(CUresult result, const char* call) const {
  if (result != CUDA_SUCCESS) throw InternalError("kiln: CUDA: " + describe_failure(api(), call, result));
}

void* CudaDevice::allocate(size_t bytes) {
  make_current();
  CUdeviceptr pointer = 0;
  CUresult result = api().cuMemAlloc(&pointer, bytes);
  if (result == CUDA_ERROR_OUT_OF_MEMORY) return nullptr;
  check(result, "cuMemAlloc");
  return reinterpret_cast<void*>(uintptr_t(pointer));
}

void CudaDevice::release(void* ptr, size_t) {
  make_current();
  check(api().cuMemFree(address(ptr)), "cuMemFree");
}

void CudaDevice::to_host(void* host, const void* device, size_t bytes) {
  make_current();
  check(api().cuMemcpyDtoHAsync(host, address(device), bytes, stream_), "cuMemcpyDtoHAsync");
  wait_for_stream();
}

void CudaDevice::from_host(void* device, const void* host, size_t bytes) {
  make_current();
  // From pageable memory the driver returns once it has staged the bytes: the caller may
  // reuse `host` at once, and later work on the stream sees the data.
  check(api().cuMemcpyHtoDAsync(address(device), host, bytes, stream_), "cuMemcpyHtoDAsync");
}

void CudaDevice::within(void* to, const void* from, size_t bytes) {
  make_current();
  check(api().cuMemcpyDtoDAsync(address(to), address(from), bytes, stream_), "cuMemcpyDtoDAsync");
}

std::string CudaDevice::occupancy() const {
  size_t free = 0, total = 0;
  if (api().cuMemGetInfo(&free, &total) != CUDA_SUCCESS) return {};
  auto gib = [](size_t bytes) { return std::to_string(bytes >> 20) + " MiB"; };
  return gib(free) + " free of " + gib(total) + " (" + name_ + ")";
}

CheckState* CudaDevice::begin_launch(const std::atomic<uint32_t>* host_interrupt) {
  host_interrupt_ = host_interrupt;
  device_interrupt_->store(0, std::memory_order_relaxed);
  launch_state_->failed = 0;
  launch_state_->lanes = 0;
  return launch_state_;
}

void CudaDevice::synchronize() {
  wait_for_stream();
  check(api().cuCtxSynchronize(), "cuCtxSynchronize");
}

void CudaDevice::wait_for_stream() {
  make_current();
  for (;;) {
    CUresult result = api().cuStreamQuery(stream_);
    if (result == CUDA_SUCCESS) return;
    if (result != CUDA_ERROR_NOT_READY) {
      check(result, "a kernel or copy on the GPU failed (cuStreamQuery)");
    }
    if (host_interrupt_ && host_interrupt_->load(std::memory_order_relaxed))
      device_interrupt_->store(1, std::memory_order_relaxed);
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

}  // namespace kiln::detail::cuda
