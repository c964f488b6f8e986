// Devices: where an array's memory lives and its kernels run. Every array is on one
// device; operations on arrays of two devices are an error, and x.to(device) copies.
#pragma once

#include <cstdint>
#include <string_view>

namespace kiln {

enum class Device : uint8_t {
  CPU,   ///< host memory; kernels compiled by LLVM for this CPU's vector units
  CUDA,  ///< an NVIDIA GPU's memory; kernels compiled by LLVM's NVPTX target
};
inline constexpr int kDeviceCount = 2;

/// "cpu" or "cuda".
const char* device_name(Device device);
/// "cpu", "cuda" or "cuda:0" (one GPU for now); ValueError for anything else.
Device parse_device(std::string_view name);

/// Whether arrays on `device` live in a GPU's memory: true for CUDA, false for the CPU and
/// for the emulated CUDA device (a test device whose memory is the host's, which DLPack and
/// NumPy therefore share as host memory).
bool is_gpu_memory(Device device);

/// Whether `device` can be used now (device_status() says why not).
bool device_available(Device device);
/// Waits until the work queued on `device` by anyone in the process (Kiln's kernels and
/// copies, other libraries' streams on the same GPU) has finished: what sharing memory
/// with another library through DLPack needs. Nothing to wait for on the CPU.
void synchronize(Device device);

/// The device new arrays are created on: KILN_DEVICE (cpu, cuda) at start-up, else the CPU.
Device default_device();
/// Changes the default device (arrays already made stay where they are). ValueError naming
/// the reason when the device cannot be used (no driver, no GPU).
void set_device(Device device);

/// Makes `device` the default for its lifetime, then restores the previous default.
class DeviceScope {
 public:
  explicit DeviceScope(Device device) : previous_(default_device()) { set_device(device); }
  ~DeviceScope() { set_device(previous_); }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  Device previous_;
};

}  // namespace kiln
