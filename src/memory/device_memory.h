// What Kiln needs of a device's memory — fresh blocks and copies to and from the host —
// the registry through which a backend provides it, and the process-wide default device.
#pragma once

#include <kiln/device.h>

#include <cstddef>
#include <string>

namespace kiln::detail {

/// One device's memory as the caching pool (allocator.h) and the copies use it. Device
/// pointers are opaque to the host except where host_accessible() says otherwise.
class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;
  /// Empty when the device can be used, else one sentence saying why not.
  virtual std::string unavailable() const { return {}; }
  /// Fresh memory of `bytes` (at least 64-byte aligned), or nullptr when the device is out
  /// of memory. Other failures throw.
  virtual void* allocate(size_t bytes) = 0;
  virtual void release(void* ptr, size_t bytes) = 0;
  /// Copies; each returns when the data has arrived (after the device's pending work).
  virtual void to_host(void* host, const void* device, size_t bytes) = 0;
  virtual void from_host(void* device, const void* host, size_t bytes) = 0;
  virtual void within(void* to, const void* from, size_t bytes) = 0;
  /// Waits until every stream of the process on the device is idle.
  virtual void synchronize() {}
  /// The host may dereference device pointers (the CPU).
  virtual bool host_accessible() const { return false; }
  /// What the device holds beyond Kiln's pool, for an out-of-memory message ("12.1 GiB
  /// of 80 GiB free"); empty when unknown.
  virtual std::string occupancy() const { return {}; }
};

/// Provides the memory of `device` (called once, by a backend's static initializer).
void register_device_memory(Device device, DeviceMemory& (*provider)());
/// The memory of `device`; ValueError naming the reason when it cannot be used.
DeviceMemory& device_memory(Device device);
/// Why `device` cannot be used; empty when it can.
std::string device_unavailable(Device device);

/// Host memory that the host treats as a device's (every read goes through to_host()):
/// the emulated CUDA device's.
DeviceMemory& emulated_device_memory();

/// KILN_DEVICE=cuda-emulated: the CUDA device is the emulated one (its memory on the host,
/// its kernels lowered for NVPTX and run on the CPU). A test device, not a user feature.
bool emulated_cuda();

}  // namespace kiln::detail
