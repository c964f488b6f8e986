// XXH3 wrappers.
#include "util/hash.h"

#include <xxhash.h>
#if defined(__x86_64__)
// libxxhash's run-time dispatch picks the widest SIMD the CPU has (AVX-512, AVX2): 4x the
// speed of the SSE2 default on the kernel forms hashed at every launch. Same hash values.
#include <xxh_x86dispatch.h>
#define KILN_XXH3_128 XXH3_128bits_dispatch
#define KILN_XXH3_128_UPDATE XXH3_128bits_update_dispatch
#else
#define KILN_XXH3_128 XXH3_128bits
#define KILN_XXH3_128_UPDATE XXH3_128bits_update
#endif

#include <cstdio>
#include <cstring>

namespace kiln::detail {

uint64_t hash_bytes(const void* data, size_t size) { return XXH3_64bits(data, size); }

Hash128 hash128_bytes(const void* data, size_t size) {
  XXH128_hash_t h = KILN_XXH3_128(data, size);
  return {h.low64, h.high64};
}

Hasher128::Hasher128() : state_(XXH3_createState()) { XXH3_128bits_reset(static_cast<XXH3_state_t*>(state_)); }
Hasher128::~Hasher128() { XXH3_freeState(static_cast<XXH3_state_t*>(state_)); }

void Hasher128::update_large(const void* data, size_t size) {
  KILN_XXH3_128_UPDATE(static_cast<XXH3_state_t*>(state_), data, size);
}

void Hasher128::flush() {
  KILN_XXH3_128_UPDATE(static_cast<XXH3_state_t*>(state_), buffer_, used_);
  used_ = 0;
}

Hash128 Hasher128::finish() {
  flush();
  XXH128_hash_t h = XXH3_128bits_digest(static_cast<XXH3_state_t*>(state_));
  return {h.low64, h.high64};
}

std::string Hash128::hex() const {
  char text[33];
  std::snprintf(text, sizeof(text), "%016llx%016llx", (unsigned long long)high, (unsigned long long)low);
  return text;
}

}  // namespace kiln::detail
