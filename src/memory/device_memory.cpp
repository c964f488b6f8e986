// The device registry, host memory (the CPU's, and the emulated CUDA device's), device
// names, and the default device read from KILN_DEVICE.
#include "memory/device_memory.h"

#include "util/env.h"

#include <kiln/errors.h>

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>
#include <string>

namespace kiln::detail {
namespace {
constexpr size_t kAlignment = 64;
constexpr size_t kHugePage = size_t(2) << 20;

/// Memory the host allocates: the CPU's, or — host_accessible false, so every host read
/// goes through to_host() as on a GPU — the emulated CUDA device's.
class HostMemory final : public DeviceMemory {
 public:
  explicit HostMemory(bool accessible) : accessible_(accessible) {}
  void* allocate(size_t bytes) override {
    bool huge = bytes >= kHugePage;
    size_t alignment = huge ? kHugePage : kAlignment;
    size_t rounded = (bytes + alignment - 1) / alignment * alignment;
    void* ptr = std::aligned_alloc(alignment, rounded);
    if (ptr && huge) madvise(ptr, rounded, MADV_HUGEPAGE);  // advice only: failure is harmless
    return ptr;
  }
  void release(void* ptr, size_t) override { std::free(ptr); }
  void to_host(void* host, const void* device, size_t bytes) override { std::memcpy(host, device, bytes); }
  void from_host(void* device, const void* host, size_t bytes) override { std::memcpy(device, host, bytes); }
  void within(void* to, const void* from, size_t bytes) override { std::memmove(to, from, bytes); }
  bool host_accessible() const override { return accessible_; }

 private:
  bool accessible_;
};

DeviceMemory& cpu_memory() {
  static HostMemory* instance = new HostMemory(true);  // outlives every Buffer
  return *instance;
}

using Provider = DeviceMemory& (*)();
std::atomic<Provider>& provider(Device device) {
  static std::atomic<Provider> providers[kDeviceCount] = {&cpu_memory, nullptr};
  return providers[int(device)];
}

/// KILN_DEVICE as read at start-up: 0 cpu, 1 cuda, 2 cuda-emulated.
int env_device() {
  static const int value = env_choice("KILN_DEVICE", {{"cpu", 0}, {"cuda|cuda:0|gpu", 1}, {"cuda-emulated", 2}}, 0);
  return value;
}

/// The default device: KILN_DEVICE's when it can be used (else a warning, and the CPU).
std::atomic<Device>& default_slot() {
  static std::atomic<Device> slot = [] {
    if (env_device() == 0) return Device::CPU;
    std::string reason = device_unavailable(Device::CUDA);
    if (reason.empty()) return Device::CUDA;
    std::cerr << "kiln: KILN_DEVICE=cuda: " << reason << "; arrays are created on the CPU\n";
    return Device::CPU;
  }();
  return slot;
}
}  // namespace

DeviceMemory& emulated_device_memory() {
  static HostMemory* instance = new HostMemory(false);
  return *instance;
}

bool emulated_cuda() { return env_device() == 2; }

void register_device_memory(Device device, DeviceMemory& (*get)()) { provider(device) = get; }

std::string device_unavailable(Device device) {
  Provider get = provider(device).load();
  if (!get) return "Kiln was built without a CUDA runtime";
  return get().unavailable();
}

DeviceMemory& device_memory(Device device) {
  if (device == Device::CPU) return cpu_memory();  // every allocation asks: no sentence to build
  if (std::string reason = device_unavailable(device); !reason.empty())
    throw ValueError(std::string("kiln: the ") + device_name(device) + " device cannot be used: " + reason +
                     ". kiln.cuda_status() says what Kiln sees of CUDA");
  return provider(device).load()();
}

}  // namespace kiln::detail

namespace kiln {

const char* device_name(Device device) { return device == Device::CUDA ? "cuda" : "cpu"; }

Device parse_device(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  if (lower == "cpu") return Device::CPU;
  if (lower == "cuda" || lower == "cuda:0" || lower == "gpu") return Device::CUDA;
  if (lower.rfind("cuda:", 0) == 0)
    throw ValueError("kiln: device '" + std::string(name) +
                     "': Kiln uses one GPU per process for now, 'cuda' (cuda:0)");
  throw ValueError("kiln: unknown device '" + std::string(name) + "'; use 'cpu' or 'cuda'");
}

bool device_available(Device device) { return detail::device_unavailable(device).empty(); }

void synchronize(Device device) {
  if (device_available(device)) detail::device_memory(device).synchronize();
}

bool is_gpu_memory(Device device) { return device == Device::CUDA && !detail::emulated_cuda(); }

Device default_device() { return detail::default_slot().load(std::memory_order_relaxed); }

void set_device(Device device) {
  detail::device_memory(device);  // throws, saying why, when the device cannot be used
  detail::default_slot() = device;
}

}  // namespace kiln
