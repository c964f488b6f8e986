// Host memory: 64-byte aligned allocations with current/peak counters, and Buffer, the
// shared owner of an evaluated array's memory (allocated by Kiln or wrapped).
#pragma once

#include <cstddef>
#include <memory>

namespace kiln::detail {

/// Allocates at least `bytes` (64-byte aligned), reusing a cached block when one fits;
/// `capacity` receives the block's size. Throws std::bad_alloc naming the size on failure.
void* allocate(size_t bytes, size_t& capacity);
/// Returns a block to the cache (or to the system when the cache is full).
void deallocate(void* ptr, size_t capacity);

/// Memory of one evaluated array. Either owned (allocated here, counted in memory_stats)
/// or wrapped (caller memory, optionally kept alive through `owner`).
class Buffer {
 public:
  static std::shared_ptr<Buffer> allocate(size_t bytes);
  static std::shared_ptr<Buffer> wrap(void* data, size_t bytes, std::shared_ptr<void> owner);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }

 private:
  Buffer(void* data, size_t bytes, size_t capacity, std::shared_ptr<void> owner)
      : data_(data), bytes_(bytes), capacity_(capacity), owner_(std::move(owner)) {}
  void* data_;
  size_t bytes_;
  size_t capacity_;  ///< 0 for wrapped memory
  std::shared_ptr<void> owner_;
};

}  // namespace kiln::detail
