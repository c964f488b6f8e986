// XXH3 wrappers.
#include "util/hash.h"

#include <xxhash.h>

#include <cstdio>

namespace kiln::detail {

uint64_t hash_bytes(const void* data, size_t size) { return XXH3_64bits(data, size); }

Hash128 hash128_bytes(const void* data, size_t size) {
  XXH128_hash_t h = XXH3_128bits(data, size);
  return {h.low64, h.high64};
}

std::string Hash128::hex() const {
  char text[33];
  std::snprintf(text, sizeof(text), "%016llx%016llx", (unsigned long long)high,
                (unsigned long long)low);
  return text;
}

}  // namespace kiln::detail
