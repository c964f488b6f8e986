// A caching pool per device and the counters behind memory_stats(). Evaluating the same
// sizes again (every iteration of an optimization loop) reuses blocks instead of asking the
// device for fresh memory: a fresh host block of 256 MiB costs 65,536 page faults on first
// touch, more than the kernel that fills it, and cuMemAlloc synchronizes the GPU.
// A request is served by the smallest cached block that holds it and is less than twice
// its size, so a wavefront whose arrays shrink from bounce to bounce reuses the blocks
// of the bounce before rather than asking for new memory for each size.
#include "memory/allocator.h"

#include "memory/device_memory.h"

#include <kiln/runtime.h>

#include <atomic>
#include <cstdio>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <vector>

namespace kiln::detail {
namespace {

struct Pool {
  std::mutex mutex;
  /// Freed blocks by capacity, ready for reuse.
  std::map<size_t, std::vector<void*>> cache;
  size_t cached_bytes = 0;
  size_t cache_limit = size_t(4) << 30;
  std::atomic<size_t> current_bytes{0}, peak_bytes{0}, allocation_count{0};
};
Pool& pool(Device device) {
  static Pool* pools = new Pool[kDeviceCount];  // outlive every Buffer
  return pools[int(device)];
}

/// The capacity a request for `bytes` is served with: 64-byte granules for small blocks,
/// 64 KiB granules (so that near sizes share blocks) from 1 MiB, 0 on overflow.
size_t capacity_for(size_t bytes) {
  size_t granule = bytes >= (size_t(1) << 20) ? size_t(64) << 10 : 64;
  size_t capacity = (bytes + granule - 1) / granule * granule;
  return capacity < bytes ? 0 : capacity;
}

void release_cache(Device device, Pool& p) {
  DeviceMemory& memory = device_memory(device);
  for (auto& [capacity, blocks] : p.cache)
    for (void* block : blocks) memory.release(block, capacity);
  p.cache.clear();
  p.cached_bytes = 0;
}

std::string gib(size_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GiB", double(bytes) / double(size_t(1) << 30));
  return text;
}

struct AllocationError : std::bad_alloc {
  AllocationError(Device device, size_t bytes, const Pool& p, const std::string& occupancy) {
    message = "kiln: could not allocate " + std::to_string(bytes) + " bytes (" + gib(bytes) + ") of " +
              (device == Device::CPU ? std::string("host") : device_name(device)) + " memory; Kiln's arrays use " +
              gib(p.current_bytes.load()) + " there (peak " + gib(p.peak_bytes.load()) + ")";
    if (!occupancy.empty()) message += ", the device has " + occupancy;
    message += ". Reduce the array size, free arrays, or evaluate in chunks (kiln.chunked_map)";
  }
  const char* what() const noexcept override { return message.c_str(); }
  std::string message;
};

void count_allocation(Pool& p, size_t capacity) {
  size_t now = p.current_bytes.fetch_add(capacity, std::memory_order_relaxed) + capacity;
  size_t peak = p.peak_bytes.load(std::memory_order_relaxed);
  while (now > peak && !p.peak_bytes.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {}
  p.allocation_count.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

void* allocate(Device device, size_t bytes, size_t& capacity) {
  if (bytes == 0) {
    capacity = 0;
    return nullptr;
  }
  DeviceMemory& memory = device_memory(device);
  Pool& p = pool(device);
  capacity = capacity_for(bytes);
  if (capacity == 0) throw AllocationError(device, bytes, p, memory.occupancy());
  void* ptr = nullptr;
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    auto it = p.cache.lower_bound(capacity);
    if (it != p.cache.end() && it->first / 2 < capacity) {  // lists are never left empty
      ptr = it->second.back();
      it->second.pop_back();
      capacity = it->first;
      p.cached_bytes -= capacity;
      if (it->second.empty()) p.cache.erase(it);
    }
  }
  if (!ptr) ptr = memory.allocate(capacity);
  if (!ptr) {  // give the cache back to the device and try once more
    {
      std::lock_guard<std::mutex> lock(p.mutex);
      release_cache(device, p);
    }
    ptr = memory.allocate(capacity);
    if (!ptr) throw AllocationError(device, bytes, p, memory.occupancy());
  }
  count_allocation(p, capacity);
  return ptr;
}

void deallocate(Device device, void* ptr, size_t capacity) {
  if (!ptr) return;
  Pool& p = pool(device);
  p.current_bytes.fetch_sub(capacity, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(p.mutex);
  if (p.cached_bytes + capacity > p.cache_limit) {
    device_memory(device).release(ptr, capacity);
    return;
  }
  p.cache[capacity].push_back(ptr);
  p.cached_bytes += capacity;
}

std::shared_ptr<Buffer> Buffer::allocate(size_t bytes, Device device) {
  size_t capacity = 0;
  void* data = detail::allocate(device, bytes, capacity);
  return std::shared_ptr<Buffer>(new Buffer(data, bytes, capacity, nullptr, device));
}

std::shared_ptr<Buffer> Buffer::wrap(void* data, size_t bytes, std::shared_ptr<void> owner, Device device) {
  return std::shared_ptr<Buffer>(new Buffer(data, bytes, 0, std::move(owner), device));
}

Buffer::~Buffer() {
  if (capacity_) deallocate(device_, data_, capacity_);
}

void Buffer::to_host(void* host, size_t bytes, size_t offset) const {
  if (bytes) device_memory(device_).to_host(host, static_cast<const char*>(data_) + offset, bytes);
}

void Buffer::from_host(const void* host, size_t bytes, size_t offset) {
  if (bytes) device_memory(device_).from_host(static_cast<char*>(data_) + offset, host, bytes);
}

HostView::HostView(const Buffer& buffer) : data_(buffer.data()) {
  if (device_memory(buffer.device()).host_accessible()) return;
  copy_.resize(buffer.bytes());
  buffer.to_host(copy_.data(), buffer.bytes());
  data_ = copy_.data();
}

StagedBuffer::StagedBuffer(size_t bytes, Device device) : buffer_(Buffer::allocate(bytes, device)) {
  if (!device_memory(device).host_accessible()) staging_.resize(bytes);
}

std::shared_ptr<Buffer> StagedBuffer::finish() {
  if (!staging_.empty()) buffer_->from_host(staging_.data(), staging_.size());
  return std::move(buffer_);
}

}  // namespace kiln::detail

namespace kiln {
MemoryStats memory_stats(Device device) {
  detail::Pool& p = detail::pool(device);
  std::lock_guard<std::mutex> lock(p.mutex);
  return {p.current_bytes.load(), p.peak_bytes.load(), p.allocation_count.load(), p.cached_bytes};
}
void reset_peak_memory(Device device) {
  detail::Pool& p = detail::pool(device);
  p.peak_bytes.store(p.current_bytes.load());
}
void flush_memory_cache(Device device) {
  if (!detail::device_unavailable(device).empty()) return;  // nothing was ever cached there
  detail::Pool& p = detail::pool(device);
  std::lock_guard<std::mutex> lock(p.mutex);
  detail::release_cache(device, p);
}
void set_memory_cache_limit(size_t bytes, Device device) {
  detail::Pool& p = detail::pool(device);
  std::lock_guard<std::mutex> lock(p.mutex);
  p.cache_limit = bytes;
  if (p.cached_bytes > bytes && detail::device_unavailable(device).empty()) detail::release_cache(device, p);
}
}  // namespace kiln
