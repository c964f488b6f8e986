// The GPU as Kiln uses it: the driver's primary context on device 0, one stream for every
// copy and launch (so work is ordered without events, and a block freed to the pool can be
// reused by later work on the stream), device memory, and page-locked launch state the
// kernels write checked-mode reports into and poll for Ctrl-C.
#pragma once

#include "backend/backend.h"
#include "backend/cuda/driver_api.h"
#include "memory/device_memory.h"

#include <atomic>
#include <string>

namespace kiln::detail::cuda {

class CudaDevice final : public DeviceMemory {
 public:
  /// The process's GPU, set up on first use; unavailable() says why when it cannot be.
  static CudaDevice& get();

  std::string unavailable() const override { return unavailable_; }
  void* allocate(size_t bytes) override;
  void release(void* ptr, size_t bytes) override;
  void to_host(void* host, const void* device, size_t bytes) override;
  void from_host(void* device, const void* host, size_t bytes) override;
  void within(void* to, const void* from, size_t bytes) override;
  std::string occupancy() const override;
  void synchronize() override;

  const DriverApi& api() const { return driver().api; }
  CUstream stream() const { return stream_; }
  /// 75 for sm_75, 90 for sm_90.
  unsigned compute_capability() const { return compute_capability_; }
  const std::string& name() const { return name_; }
  /// Makes the context current on the calling thread (once per thread).
  void make_current() const;
  /// Throws InternalError naming `call` and the driver's description of `result`.
  void check(CUresult result, const char* call) const;
  /// Waits for the stream; while waiting, Ctrl-C (the host's flag) is passed on to the
  /// running kernels through the page-locked flag they poll.
  void wait_for_stream();

  /// The page-locked CheckState a launch passes its kernel (its interrupt pointer points at
  /// the page-locked flag), reset; `host_interrupt` is the flag synchronize() watches.
  CheckState* begin_launch(const std::atomic<uint32_t>* host_interrupt);

 private:
  CudaDevice();
  std::string unavailable_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  CUstream stream_ = nullptr;
  unsigned compute_capability_ = 0;
  std::string name_;
  CheckState* launch_state_ = nullptr;
  std::atomic<uint32_t>* device_interrupt_ = nullptr;
  const std::atomic<uint32_t>* host_interrupt_ = nullptr;
};

}  // namespace kiln::detail::cuda
