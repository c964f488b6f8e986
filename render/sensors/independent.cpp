// The independent sampler (Mitsuba 3's `independent`): uncorrelated uniform numbers from
// one PCG32 stream per lane. `sample_count` (4) is the default samples per pixel; `seed`
// (0) is added to each render's seed.
#include "core/parameter_checks.h"

#include <kiln/construct.h>
#include <kiln/render/plugin.h>
#include <kiln/render/sampler.h>

namespace kiln::render {
namespace {

/// The Tiny Encryption Algorithm on two words (Zafar et al., "GPU random numbers via the
/// tiny encryption algorithm"): decorrelates the (seed, lane) pairs that seed the streams.
UInt64 tea(UInt32 v0, UInt32 v1) {
  uint32_t sum = 0;
  for (int round = 0; round < 4; ++round) {
    sum += 0x9e3779b9u;
    v0 = v0 + (((v1 << 4u) + 0xa341316cu) ^ (v1 + sum) ^ ((v1 >> 5u) + 0xc8013ea4u));
    v1 = v1 + (((v0 << 4u) + 0xad90777du) ^ (v0 + sum) ^ ((v0 >> 5u) + 0x7e95761eu));
  }
  return cast<uint64_t>(v0) | (cast<uint64_t>(v1) << 32u);
}

class IndependentSampler : public Sampler {
 public:
  explicit IndependentSampler(const Properties& props) {
    int64_t count = props.get_int("sample_count", 4);
    if (count <= 0 || count > (int64_t(1) << 24))
      throw_parameter_error(props, "sample_count", "must be between 1 and 2^24, got " + std::to_string(count));
    sample_count_ = uint32_t(count);
    base_seed_ = uint32_t(props.get_int("seed", 0));
  }

  PCG32 rng(uint32_t seed, size_t size) const override {
    UInt32 lane = arange<UInt32>(size);
    UInt32 seed_value = opaque<UInt32>(base_seed_ + seed);
    return PCG32(size, tea(lane, seed_value), tea(seed_value, lane));
  }

 private:
  uint32_t base_seed_ = 0;
};

}  // namespace

KILN_REGISTER_PLUGIN(PluginKind::Sampler, "independent",
                     [](const Properties& p) { return std::make_shared<IndependentSampler>(p); });

}  // namespace kiln::render
