// Array memory: a caching pool per device with current/peak counters, and Buffer, the
// shared owner of an evaluated array's memory (allocated by Kiln or wrapped).
#pragma once

#include <kiln/device.h>

#include <cstddef>
#include <memory>
#include <vector>

namespace kiln::detail {

/// Allocates at least `bytes` on `device`, reusing a cached block when one fits;
/// `capacity` receives the block's size. When the device is out of memory, the pool's
/// cache is returned and the request tried once more; then std::bad_alloc (MemoryError in
/// Python) names the device, the request and what is in use.
void* allocate(Device device, size_t bytes, size_t& capacity);
/// Returns a block to the device's cache (or to the device when the cache is full).
void deallocate(Device device, void* ptr, size_t capacity);

/// Memory of one evaluated array on one device. Either owned (allocated here, counted in
/// memory_stats) or wrapped (caller memory, optionally kept alive through `owner`).
class Buffer {
 public:
  static std::shared_ptr<Buffer> allocate(size_t bytes, Device device);
  static std::shared_ptr<Buffer> wrap(void* data, size_t bytes, std::shared_ptr<void> owner, Device device);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  /// The address on the device (dereference on the host only for the CPU).
  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  Device device() const { return device_; }

  /// Copies `bytes` from offset `offset` into host memory at `host`.
  void to_host(void* host, size_t bytes, size_t offset = 0) const;
  /// Copies `bytes` from host memory into the buffer at `offset`.
  void from_host(const void* host, size_t bytes, size_t offset = 0);

 private:
  Buffer(void* data, size_t bytes, size_t capacity, std::shared_ptr<void> owner, Device device)
      : data_(data), bytes_(bytes), capacity_(capacity), owner_(std::move(owner)), device_(device) {}
  void* data_;
  size_t bytes_;
  size_t capacity_;  ///< 0 for wrapped memory
  std::shared_ptr<void> owner_;
  Device device_;
};

/// A buffer's bytes readable on the host: the buffer itself where the host may read the
/// device's memory (the CPU), else a copy.
class HostView {
 public:
  explicit HostView(const Buffer& buffer);
  const void* data() const { return data_; }

 private:
  std::vector<std::byte> copy_;
  const void* data_;
};

/// Host memory to fill, then the contents of a new buffer on `device`: the buffer itself
/// on the CPU, else a host block copied over by finish().
class StagedBuffer {
 public:
  StagedBuffer(size_t bytes, Device device);
  void* data() { return staging_.empty() ? buffer_->data() : staging_.data(); }
  std::shared_ptr<Buffer> finish();

 private:
  std::shared_ptr<Buffer> buffer_;
  std::vector<std::byte> staging_;
};

}  // namespace kiln::detail
