// Hashing: XXH3 (libxxhash) for node keys and the 128-bit structural kernel hash.
#pragma once

#include <cstddef>
#include <cstdint>
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

}  // namespace kiln::detail
