// Samplers (Mitsuba 3's `independent`): the random numbers a render consumes.
//
// What an implementation guarantees:
// - sample_count() is the samples per pixel a render uses when it is not given one.
// - rng(seed, size) returns `size` generators whose streams differ per lane and per seed;
//   the seed reaches kernels as an opaque parameter, so a new seed compiles nothing.
// - The same seed gives the same numbers in symbolic and evaluated mode.
#pragma once

#include <kiln/random.h>
#include <kiln/render/properties.h>

namespace kiln::render {

class Sampler : public Object {
 public:
  PluginKind kind() const override { return PluginKind::Sampler; }
  uint32_t sample_count() const { return sample_count_; }
  /// One generator per lane for a render with `seed`.
  virtual PCG32 rng(uint32_t seed, size_t size) const = 0;

 protected:
  uint32_t sample_count_ = 4;
};

}  // namespace kiln::render
