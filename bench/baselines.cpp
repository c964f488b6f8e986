// The baselines of bench/baselines.h. This file alone is compiled with -O3 -march=native.
#include "baselines.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>

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
    for (size_t j = 0; j < kTile; ++j)
      mandelbrot_step(zx[j], zy[j], count[j], active[j], cx[j], cy[j], v.bailout);
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

}  // namespace bench
