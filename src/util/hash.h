// Hashing: XXH3 (libxxhash) for node keys and the 128-bit structural kernel hash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace kiln::detail {

uint64_t hash_bytes(const void* data, size_t size);

/// A 128-bit hash (XXH3-128), the identity of a kernel.
struct Hash128 {
  uint64_t low = 0, high = 0;
  bool operator==(const Hash128&) const = default;
  /// 32 hex digits, high half first.
  std::string hex() const;
};
struct Hash128Hasher {
  size_t operator()(const Hash128& h) const { return size_t(h.low ^ (h.high * 0x9E3779B97F4A7C15ull)); }
};
Hash128 hash128_bytes(const void* data, size_t size);

/// XXH3-128 of a byte stream given in pieces; small pieces are gathered in a buffer first.
class Hasher128 {
 public:
  Hasher128();
  ~Hasher128();
  Hasher128(const Hasher128&) = delete;
  Hasher128& operator=(const Hasher128&) = delete;
  /// Inline: the kernel hash calls it once per statement.
  void update(const void* data, size_t size) {
    if (used_ + size > sizeof(buffer_)) flush();
    if (size > sizeof(buffer_)) return update_large(data, size);
    std::memcpy(buffer_ + used_, data, size);
    used_ += size;
  }
  template <typename T> void update(const T& value) { update(&value, sizeof(T)); }
  Hash128 finish();

 private:
  void flush();
  void update_large(const void* data, size_t size);
  void* state_;  ///< XXH3_state_t
  unsigned char buffer_[4096];
  size_t used_ = 0;
};

}  // namespace kiln::detail
