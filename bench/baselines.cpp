// The baselines of bench/baselines.h. This file alone is compiled with -O3 -march=native.
#include "baselines.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>

namespace bench {
namespace {

/// Runs body(begin, end) over [0, n) in blocks of `block`, one TBB task range per block.
template <typename Body> void parallel_blocks(size_t n, size_t block, const Body& body) {
  size_t blocks = (n + block - 1) / block;
  tbb::parallel_for(tbb::blocked_range<size_t>(0, blocks, 1), [&](const tbb::blocked_range<size_t>& range) {
    for (size_t b = range.begin(); b != range.end(); ++b) body(b * block, std::min(n, (b + 1) * block));
  });
}

constexpr size_t kTile = 64;  // five float arrays and a mask of one tile stay in L1

/// The pixels [first, min(first + kTile, end)) of the branch-free Mandelbrot. The mask is
/// an int32_t per lane, as wide as the floats: GCC 12 does not vectorize the loop over
/// pixels with a bool mask.
void mandelbrot_tile(const MandelbrotView& v, size_t first, size_t end, float* counts) {
  float cx[kTile], cy[kTile], zx[kTile], zy[kTile], count[kTile];
  int32_t active[kTile];
  for (size_t j = 0; j < kTile; ++j) {
    uint32_t i = uint32_t(first + j);  // lanes past `end` compute values that are not stored
    cx[j] = v.x0 + float(i % v.width) * v.dx;
    cy[j] = v.y0 + float(i / v.width) * v.dy;
    zx[j] = zy[j] = count[j] = 0.0f;
    active[j] = 1;
  }
  for (int n = 0; n < v.iterations; ++n)
    for (size_t j = 0; j < kTile; ++j) mandelbrot_step(zx[j], zy[j], count[j], active[j], cx[j], cy[j], v.bailout);
  std::copy(count, count + std::min(kTile, end - first), counts + first);
}

}  // namespace

const char* baseline_build() { return "g++ " __VERSION__ " " BENCH_BASELINE_FLAGS ", oneTBB"; }

void fused10_loop(const float* x, const float* y, const float* z, float* out, size_t n, size_t block) {
  parallel_blocks(n, block, [=](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) out[i] = fused10(x[i], y[i], z[i]);
  });
}

void triad_loop(const float* a, float s, const float* b, float* out, size_t n, size_t block) {
  parallel_blocks(n, block, [=](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) out[i] = triad(a[i], s, b[i]);
  });
}

void mandelbrot_early_exit(const MandelbrotView& v, float* counts, size_t block) {
  parallel_blocks(v.pixels(), block, [=](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      float cx = v.x0 + float(uint32_t(i) % v.width) * v.dx;
      float cy = v.y0 + float(uint32_t(i) / v.width) * v.dy;
      float zx = 0.0f, zy = 0.0f;
      int n = 0;
      for (; n < v.iterations; ++n) {
        float zx2 = zx * zx, zy2 = zy * zy;
        if (!(zx2 + zy2 <= v.bailout)) break;
        float next_zy = (zx + zx) * zy + cy;
        zx = zx2 - zy2 + cx;
        zy = next_zy;
      }
      counts[i] = float(n);
    }
  });
}

void mandelbrot_branch_free(const MandelbrotView& v, float* counts, size_t block) {
  parallel_blocks(v.pixels(), block, [=](size_t begin, size_t end) {
    for (size_t first = begin; first < end; first += kTile) mandelbrot_tile(v, first, end, counts);
  });
}

uint64_t path_trace_loop(const path::Parameters& params, size_t n, float* red, float* green, float* blue,
                         size_t block) {
  using namespace path;
  std::atomic<uint64_t> bounces{0};
  parallel_blocks(n, block, [&](size_t begin, size_t end) {
    uint64_t block_bounces = 0;
    for (size_t i = begin; i < end; ++i) {
      Pcg32 rng(i);
      Float3 direction =
          normalize3<float>(Float3{pixel_coordinate(uint32_t(i) % 1024u), pixel_coordinate(uint32_t(i) / 1024u), 1.f});
      Float3 throughput{1.f, 1.f, 1.f}, radiance{0.f, 0.f, 0.f};
      uint32_t material = draw_material<float, uint32_t>(rng.next_float32());
      uint32_t depth = 0;
      for (bool active = true; active;) {
        bool alive = true;
        switch (material) {
          case kDiffuse: {
            float u1 = rng.next_float32();
            float u2 = rng.next_float32();
            diffuse_bounce(direction, throughput, params.albedo, u1, u2);
            break;
          }
          case kGlossy: {
            float u1 = rng.next_float32();
            float u2 = rng.next_float32();
            float u3 = rng.next_float32();
            glossy_bounce(direction, throughput, params.roughness, u1, u2, u3);
            break;
          }
          default: emit<float>(radiance, throughput, params.strength); alive = false;
        }
        bool survive = roulette<float>(throughput, rng.next_float32(), depth);
        depth += 1;
        material = draw_material<float, uint32_t>(rng.next_float32());
        active = alive && survive && depth < kMaxBounces;
      }
      red[i] = radiance.x, green[i] = radiance.y, blue[i] = radiance.z;
      block_bounces += depth;
    }
    bounces += block_bounces;
  });
  return bounces;
}

}  // namespace bench
