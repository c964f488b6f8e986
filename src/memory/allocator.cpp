// Aligned host allocation with a cache of freed blocks and the counters behind
// memory_stats(). Evaluating the same sizes again (every iteration of an optimization
// loop) reuses blocks instead of asking the system for fresh pages: a fresh block of
// 256 MiB costs 65,536 page faults on first touch, more than the kernel that fills it.
// A request is served by the smallest cached block that holds it and is less than twice
// its size, so a wavefront whose arrays shrink from bounce to bounce reuses the blocks
// of the bounce before rather than touching new pages for each size.
// Blocks of 2 MiB or more are huge-page aligned and advised as such.
#include "memory/allocator.h"

#include <kiln/runtime.h>

#include <sys/mman.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <vector>

namespace kiln::detail {
namespace {
constexpr size_t kAlignment = 64;
constexpr size_t kHugePage = size_t(2) << 20;

struct Allocator {
  std::mutex mutex;
  /// Freed blocks by capacity, ready for reuse.
  std::map<size_t, std::vector<void*>> cache;
  size_t cached_bytes = 0;
  size_t cache_limit = size_t(4) << 30;
  std::atomic<size_t> current_bytes{0}, peak_bytes{0}, allocation_count{0};
};
Allocator& allocator() {
  static Allocator* instance = new Allocator();  // outlives every Buffer
  return *instance;
}

/// The capacity a request for `bytes` is served with: 64-byte granules for small blocks,
/// 64 KiB granules (so that near sizes share blocks) from 1 MiB, 0 on overflow.
size_t capacity_for(size_t bytes) {
  size_t granule = bytes >= (size_t(1) << 20) ? size_t(64) << 10 : kAlignment;
  size_t capacity = (bytes + granule - 1) / granule * granule;
  return capacity < bytes ? 0 : capacity;
}

void* system_allocate(size_t capacity) {
  bool huge = capacity >= kHugePage;
  size_t alignment = huge ? kHugePage : kAlignment;
  size_t rounded = (capacity + alignment - 1) / alignment * alignment;
  void* ptr = std::aligned_alloc(alignment, rounded);
  if (ptr && huge) madvise(ptr, rounded, MADV_HUGEPAGE);  // advice only: failure is harmless
  return ptr;
}

void release_cache(Allocator& a) {
  for (auto& [capacity, blocks] : a.cache)
    for (void* p : blocks) std::free(p);
  a.cache.clear();
  a.cached_bytes = 0;
}

struct AllocationError : std::bad_alloc {
  explicit AllocationError(size_t bytes)
      : message("kiln: could not allocate " + std::to_string(bytes) +
                " bytes of host memory; reduce the array size or free arrays first") {}
  const char* what() const noexcept override { return message.c_str(); }
  std::string message;
};

void count_allocation(Allocator& a, size_t capacity) {
  size_t now = a.current_bytes.fetch_add(capacity, std::memory_order_relaxed) + capacity;
  size_t peak = a.peak_bytes.load(std::memory_order_relaxed);
  while (now > peak && !a.peak_bytes.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {}
  a.allocation_count.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

void* allocate(size_t bytes, size_t& capacity) {
  if (bytes == 0) {
    capacity = 0;
    return nullptr;
  }
  capacity = capacity_for(bytes);
  if (capacity == 0) throw AllocationError(bytes);
  Allocator& a = allocator();
  void* ptr = nullptr;
  {
    std::lock_guard<std::mutex> lock(a.mutex);
    auto it = a.cache.lower_bound(capacity);
    if (it != a.cache.end() && it->first / 2 < capacity) {  // lists are never left empty
      ptr = it->second.back();
      it->second.pop_back();
      capacity = it->first;
      a.cached_bytes -= capacity;
      if (it->second.empty()) a.cache.erase(it);
    }
  }
  if (!ptr) ptr = system_allocate(capacity);
  if (!ptr) {  // give the cache back to the system and try once more
    {
      std::lock_guard<std::mutex> lock(a.mutex);
      release_cache(a);
    }
    ptr = system_allocate(capacity);
    if (!ptr) throw AllocationError(bytes);
  }
  count_allocation(a, capacity);
  return ptr;
}

void deallocate(void* ptr, size_t capacity) {
  if (!ptr) return;
  Allocator& a = allocator();
  a.current_bytes.fetch_sub(capacity, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(a.mutex);
  if (a.cached_bytes + capacity > a.cache_limit) {
    std::free(ptr);
    return;
  }
  a.cache[capacity].push_back(ptr);
  a.cached_bytes += capacity;
}

std::shared_ptr<Buffer> Buffer::allocate(size_t bytes) {
  size_t capacity = 0;
  void* data = detail::allocate(bytes, capacity);
  return std::shared_ptr<Buffer>(new Buffer(data, bytes, capacity, nullptr));
}

std::shared_ptr<Buffer> Buffer::wrap(void* data, size_t bytes, std::shared_ptr<void> owner) {
  return std::shared_ptr<Buffer>(new Buffer(data, bytes, 0, std::move(owner)));
}

Buffer::~Buffer() {
  if (capacity_) deallocate(data_, capacity_);
}

}  // namespace kiln::detail

namespace kiln {
MemoryStats memory_stats() {
  detail::Allocator& a = detail::allocator();
  std::lock_guard<std::mutex> lock(a.mutex);
  return {a.current_bytes.load(), a.peak_bytes.load(), a.allocation_count.load(), a.cached_bytes};
}
void reset_peak_memory() {
  detail::Allocator& a = detail::allocator();
  a.peak_bytes.store(a.current_bytes.load());
}
void flush_memory_cache() {
  detail::Allocator& a = detail::allocator();
  std::lock_guard<std::mutex> lock(a.mutex);
  detail::release_cache(a);
}
void set_memory_cache_limit(size_t bytes) {
  detail::Allocator& a = detail::allocator();
  std::lock_guard<std::mutex> lock(a.mutex);
  a.cache_limit = bytes;
  if (a.cached_bytes > bytes) detail::release_cache(a);
}
}  // namespace kiln
