// Aligned host allocation with the counters behind memory_stats().
#include "memory/allocator.h"

#include <kiln/runtime.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>

namespace kiln::detail {
namespace {
constexpr size_t kAlignment = 64;
std::atomic<size_t> current_bytes{0}, peak_bytes{0}, allocation_count{0};

void raise_peak(size_t now) {
  size_t peak = peak_bytes.load(std::memory_order_relaxed);
  while (now > peak && !peak_bytes.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

struct AllocationError : std::bad_alloc {
  explicit AllocationError(size_t bytes)
      : message("kiln: could not allocate " + std::to_string(bytes) +
                " bytes of host memory; reduce the array size or free arrays first") {}
  const char* what() const noexcept override { return message.c_str(); }
  std::string message;
};
}  // namespace

void* allocate(size_t bytes) {
  size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  if (rounded < bytes) throw AllocationError(bytes);
  void* ptr = rounded ? std::aligned_alloc(kAlignment, rounded) : nullptr;
  if (rounded && !ptr) throw AllocationError(bytes);
  raise_peak(current_bytes.fetch_add(bytes, std::memory_order_relaxed) + bytes);
  allocation_count.fetch_add(1, std::memory_order_relaxed);
  return ptr;
}

void deallocate(void* ptr, size_t bytes) {
  std::free(ptr);
  current_bytes.fetch_sub(bytes, std::memory_order_relaxed);
}

std::shared_ptr<Buffer> Buffer::allocate(size_t bytes) {
  void* data = detail::allocate(bytes);
  return std::shared_ptr<Buffer>(new Buffer(data, bytes, true, nullptr));
}

std::shared_ptr<Buffer> Buffer::wrap(void* data, size_t bytes, std::shared_ptr<void> owner) {
  return std::shared_ptr<Buffer>(new Buffer(data, bytes, false, std::move(owner)));
}

Buffer::~Buffer() {
  if (owned_) deallocate(data_, bytes_);
}

}  // namespace kiln::detail

namespace kiln {
MemoryStats memory_stats() {
  return {detail::current_bytes.load(), detail::peak_bytes.load(), detail::allocation_count.load()};
}
void reset_peak_memory() { detail::peak_bytes.store(detail::current_bytes.load()); }
}  // namespace kiln
